package engine

import (
	"context"
	"encoding/csv"
	"io"

	"svcd/fsm"
)

// CSVExport is an export of one collection, resolved and ready to stream.
type CSVExport struct {
	e  *Engine
	ci *Coll
	// cols are the positions in ci.fields of the exported fields.
	cols []int
}

// ExportCSV resolves collection name for export: 404 when it does not
// exist, 422 unless it is a base collection. Nothing is read yet.
func (e *Engine) ExportCSV(name string) (*CSVExport, error) {
	ci, err := e.csvCollection(name)
	if err != nil {
		return nil, err
	}
	x := &CSVExport{e: e, ci: ci}
	for i, f := range ci.fields {
		if !csvSkipped(f) {
			x.cols = append(x.cols, i)
		}
	}
	return x, nil
}

// Name is the collection's name (for the attachment's file name).
func (x *CSVExport) Name() string { return x.ci.Name }

// WriteTo writes the header and every record, by id, to w. Records are
// read a page at a time, each page in its own read transaction, and
// written out before the next is read: memory stays at one page however
// large the collection, and no read holds the replica while the client is
// slow. A record is in the export if it existed when its page was read
// (one created or deleted during a long export may or may not be). An
// error after the first byte leaves the output cut short; the caller must
// make that visible to the client.
func (x *CSVExport) WriteTo(ctx context.Context, w io.Writer) error {
	cw := csv.NewWriter(w)
	rec := make([]string, 3+len(x.cols))
	rec[0], rec[1], rec[2] = "id", "created", "updated"
	for i, c := range x.cols {
		rec[3+i] = x.ci.fields[c].Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	q := "SELECT " + x.ci.selectCols + " FROM " + x.ci.table + " WHERE id > ?1 ORDER BY id LIMIT ?2"
	var cell, scratch []byte
	page := make([][]any, 0, csvExportPage)
	after := ""
	for {
		page = page[:0]
		err := x.e.store.View(ctx, func(r *fsm.Reader) error {
			rows, err := r.Query(q, after, csvExportPage)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				row, err := x.ci.scanRow(rows.Scan)
				if err != nil {
					return err
				}
				page = append(page, row)
			}
			return rows.Err()
		})
		if err != nil {
			return err
		}
		for _, row := range page {
			rec[0] = asString(row[0])
			rec[1] = asString(row[1])
			rec[2] = asString(row[2])
			for i, c := range x.cols {
				f := x.ci.fields[c]
				cell, scratch = appendCSVCell(cell[:0], scratch, f.Field, f.typ, x.ci.open(row[3+c]))
				rec[3+i] = string(cell)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if len(page) < csvExportPage {
			return nil
		}
		after = asString(page[len(page)-1][0])
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
