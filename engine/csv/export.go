package csv

import (
	"context"
	stdcsv "encoding/csv"
	"io"
	"log/slog"

	"svcd/engine"
	"svcd/fsm"
	"svcd/internal/progress"
)

// Export is an export of one collection, resolved and ready to stream.
type Export struct {
	m  *CSV
	ci *engine.Coll
	// cols are the positions in ci.RowFields() of the exported fields.
	cols []int
}

// ExportCSV resolves collection name for export: 404 when it does not
// exist, 422 unless it is a base collection. Nothing is read yet.
func (m *CSV) ExportCSV(name string) (*Export, error) {
	ci, err := m.collection(name)
	if err != nil {
		return nil, err
	}
	x := &Export{m: m, ci: ci}
	for i, f := range ci.RowFields() {
		if !csvSkipped(f) {
			x.cols = append(x.cols, i)
		}
	}
	return x, nil
}

// Name is the collection's name (for the attachment's file name).
func (x *Export) Name() string { return x.ci.Name }

// WriteTo writes the header and every record, by id, to w. Records are
// read a page at a time, each page in its own read transaction, and
// written out before the next is read: memory stays at one page however
// large the collection, and no read holds the replica while the client is
// slow. A record is in the export if it existed when its page was read
// (one created or deleted during a long export may or may not be). An
// error after the first byte leaves the output cut short; the caller must
// make that visible to the client.
//
// The export logs its progress (rows and bytes written; the time left
// against the collection's row count when the export started) and a
// summary line ("csv export done").
func (x *Export) WriteTo(ctx context.Context, w io.Writer) (err error) {
	prog := progress.Log(x.m.core.Logger(), "csv export", progress.Options{
		Unit: "rows", Bytes: true, Interval: x.m.progress,
		Attrs: []slog.Attr{slog.String("collection", x.ci.Name)},
	})
	defer func() { prog.Finish(err) }()
	cw := stdcsv.NewWriter(countingWriter{w: w, prog: prog})
	fields := x.ci.RowFields()
	rec := make([]string, 3+len(x.cols))
	rec[0], rec[1], rec[2] = "id", "created", "updated"
	for i, c := range x.cols {
		rec[3+i] = fields[c].Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	var cell, scratch []byte
	page := make([][]any, 0, csvExportPage)
	after := ""
	for {
		first := after == ""
		err := x.m.core.Store().View(ctx, func(r *fsm.Reader) error {
			if first {
				// The total of the progress lines: the rows as the
				// export starts (a count is one pass over the table's
				// smallest index, cheap next to the export).
				var n int64
				if err := r.QueryRow("SELECT count(*) FROM " + x.ci.Table()).Scan(&n); err != nil {
					return err
				}
				prog.SetTotal(n)
			}
			var err error
			page, err = x.ci.ReadRows(r, page[:0], after, csvExportPage)
			return err
		})
		if err != nil {
			return err
		}
		for _, row := range page {
			rec[0] = engine.AsString(row[0])
			rec[1] = engine.AsString(row[1])
			rec[2] = engine.AsString(row[2])
			for i, c := range x.cols {
				f := fields[c]
				cell, scratch = appendCSVCell(cell[:0], scratch, f.Field, f.FieldType(), x.ci.Open(row[3+c]))
				rec[3+i] = string(cell)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		prog.Add(int64(len(page)))
		if err := cw.Error(); err != nil {
			return err
		}
		if len(page) < csvExportPage {
			return nil
		}
		after = engine.AsString(page[len(page)-1][0])
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// countingWriter counts the bytes of an export as they are written.
type countingWriter struct {
	w    io.Writer
	prog *progress.Reporter
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.prog.AddBytes(int64(n))
	return n, err
}
