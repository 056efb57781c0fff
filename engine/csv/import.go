package csv

import (
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"

	"svcd/engine"
	"svcd/internal/progress"
)

// ImportResult is the answer of an import (SPEC.md "CSV").
type ImportResult struct {
	Created int `json:"created"`
	Failed  int `json:"failed"`
	Total   int `json:"total"`
	// Errors are the first MaxErrors failed rows, in row order.
	Errors []RowError `json:"errors"`
}

// RowError is one failed row: its 1-based number (the header is row 1)
// and what was wrong, per field as in a 422's details, or under "_row".
type RowError struct {
	Row     int            `json:"row"`
	Details map[string]any `json:"details"`
}

// csvPending is a row read and not yet proposed; failed holds the error
// of a row that could not be read, reported with its chunk so that errors
// stay in row order.
type csvPending struct {
	row    int
	cells  []string
	failed map[string]any
}

// csvImporter carries one import through its chunks.
type csvImporter struct {
	m       *CSV
	p       engine.Principal
	name    string
	header  []string
	pending []csvPending
	// pendingBytes is the size of the pending rows' cells.
	pendingBytes int
	res          *ImportResult
	index        uint64
	// rd is the body's reader (its offset is the bytes done), prog the
	// import's progress: rows done are the rows decided (created or
	// failed).
	rd   *stdcsv.Reader
	prog *progress.Reporter
}

// ImportCSV creates one record of base collection name per row of body
// (CSV, the first row naming the columns). Every row goes through a
// create's full validation, as an admin's create; the valid rows are
// committed csvChunkRows per log command. A failure to reach the log
// stops the import: the chunks committed before it stay, and the error
// says how far it got. index is the log index of the last chunk.
//
// The import logs its progress (rows decided, bytes of the body read and,
// when body has a Size method as a *bytes.Reader does, the time left) and
// a summary line ("csv import done").
func (m *CSV) ImportCSV(ctx context.Context, p engine.Principal, name string, body io.Reader) (res *ImportResult, index uint64, err error) {
	if !p.IsAdmin() {
		return nil, 0, engine.ErrAdminOnly
	}
	ci, err := m.collection(name)
	if err != nil {
		return nil, 0, err
	}
	rd := stdcsv.NewReader(body)
	header, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, engine.FieldError("body", "must start with a header row naming the columns")
	}
	if err != nil {
		return nil, 0, engine.FieldError("body", "the header row is not valid CSV: "+csvParseMessage(err))
	}
	for i := range header {
		header[i] = csvHeaderCell(header[i])
	}
	if err := csvCheckHeader(ci, header); err != nil {
		return nil, 0, err
	}
	im := &csvImporter{m: m, p: p, name: ci.Name, header: header, res: &ImportResult{Errors: []RowError{}}, rd: rd}
	im.prog = progress.Log(m.core.Logger(), "csv import", progress.Options{
		Unit: "rows", Bytes: true, TotalBytes: bodySize(body), Interval: m.progress,
		Attrs: []slog.Attr{slog.String("collection", ci.Name)},
	})
	res, index, err = im.run(ctx)
	im.prog.Finish(err, slog.Int("created", im.res.Created), slog.Int("failed", im.res.Failed))
	return res, index, err
}

// bodySize is the size of an import's body when the reader knows it.
func bodySize(body io.Reader) int64 {
	if s, ok := body.(interface{ Size() int64 }); ok {
		return s.Size()
	}
	return 0
}

// run reads the rows after the header and commits them chunk by chunk.
func (im *csvImporter) run(ctx context.Context) (*ImportResult, uint64, error) {
	rd, header := im.rd, im.header
	for row := 2; ; row++ {
		cells, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		im.res.Total++
		pr := csvPending{row: row, cells: cells}
		stop := false
		switch {
		case errors.Is(err, stdcsv.ErrFieldCount):
			pr.failed = csvRowError("has %d cells; the header has %d", len(cells), len(header))
		case err != nil:
			// The reader cannot be trusted past a syntax error: the row
			// fails and the import ends there.
			pr.failed = csvRowError("is not valid CSV (%s); the import stopped here", csvParseMessage(err))
			stop = true
		}
		im.pending = append(im.pending, pr)
		for _, c := range cells {
			im.pendingBytes += len(c)
		}
		if stop {
			break
		}
		if len(im.pending) == csvChunkRows || im.pendingBytes >= csvChunkBytes {
			if err := im.flush(ctx); err != nil {
				return nil, im.index, err
			}
		}
	}
	if err := im.flush(ctx); err != nil {
		return nil, im.index, err
	}
	return im.res, im.index, nil
}

// csvCheckHeader refuses a header naming one field twice.
func csvCheckHeader(ci *engine.Coll, header []string) error {
	seen := map[string]bool{}
	for _, h := range header {
		f := csvColumnField(ci, h)
		if f < 0 {
			continue
		}
		name := ci.RowFields()[f].Name
		if seen[name] {
			return engine.FieldError("body", fmt.Sprintf("the header names column %q twice", name))
		}
		seen[name] = true
	}
	return nil
}

// csvColumnField is the position in ci.RowFields() of the field a column feeds,
// or -1 for a column the import skips (id, created, updated, unknown
// names, autodates and files).
func csvColumnField(ci *engine.Coll, name string) int {
	switch name {
	case "id", "created", "updated":
		return -1
	}
	for i, f := range ci.RowFields() {
		if f.Name == name && csvImportField(f) {
			return i
		}
	}
	return -1
}

// fail counts a failed row and keeps its error while there is room.
func (im *csvImporter) fail(re RowError) {
	im.res.Failed++
	if len(im.res.Errors) < MaxErrors {
		im.res.Errors = append(im.res.Errors, re)
	}
}

// flush validates the pending rows against the collection as it is now and
// proposes the valid ones as one command. A schema change racing the
// proposal redoes the chunk against the new schema.
func (im *csvImporter) flush(ctx context.Context) error {
	if len(im.pending) == 0 {
		return nil
	}
	read := im.rd.InputOffset()
	core := im.m.core
	hooks := &rowHooks{im: im}
	for attempt := 0; ; attempt++ {
		ci, err := im.m.collection(im.name)
		if err != nil {
			return im.stopped(err)
		}
		cols := make([]int, len(im.header))
		for j, h := range im.header {
			cols[j] = csvColumnField(ci, h)
		}
		now := core.Now().Unix()
		var failed []RowError
		cmd := importCmd{Coll: ci.ID, Ver: ci.Version, Rows: make([]importRow, 0, len(im.pending))}
		creates := core.Records().AdminCreates(im.p, ci, now)
		for _, pr := range im.pending {
			if pr.failed != nil {
				failed = append(failed, RowError{Row: pr.row, Details: pr.failed})
				continue
			}
			in, d := csvRowInput(ci, cols, pr.cells)
			if d == nil {
				var refused map[string]any
				if in, refused = hooks.before(ctx, pr.row, in); refused != nil {
					failed = append(failed, RowError{Row: pr.row, Details: refused})
					continue
				}
			}
			create, verr := creates.Prepare(in)
			if verr != nil || d != nil {
				// Every field's problem at once: the cells that did not
				// decode, and what validation says of the others.
				if d == nil {
					d = map[string]any{}
				}
				if verr != nil {
					for k, v := range csvErrorDetails(verr) {
						if _, ok := d[k]; !ok {
							d[k] = v
						}
					}
				}
				failed = append(failed, RowError{Row: pr.row, Details: d})
				continue
			}
			cmd.Rows = append(cmd.Rows, importRow{Row: pr.row, Create: create})
		}
		created := 0
		if len(cmd.Rows) > 0 {
			res, idx, err := core.Propose(ctx, cmdImport, cmd)
			if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
				continue
			}
			if err != nil {
				return im.stopped(err)
			}
			out, ok := res.(*chunkResult)
			if !ok {
				return im.stopped(fmt.Errorf("csv: import result is %T", res))
			}
			im.index = idx
			failed = append(failed, out.Failed...)
			created = len(cmd.Rows) - len(out.Failed)
			hooks.after(ctx, cmd.Rows, out.Failed)
		}
		im.res.Created += created
		sort.Slice(failed, func(a, b int) bool { return failed[a].Row < failed[b].Row })
		for _, f := range failed {
			im.fail(f)
		}
		im.prog.Add(int64(len(im.pending)))
		im.prog.SetBytes(read)
		im.pending, im.pendingBytes = im.pending[:0], 0
		return nil
	}
}

// stopped is the error of an import cut short: the cause's kind, with how
// many rows were created before it.
func (im *csvImporter) stopped(err error) error {
	where := fmt.Sprintf("CSV import stopped at row %d (%d records created before)", im.pending[0].row, im.res.Created)
	if de := engine.AsError(err); de != nil {
		return &engine.Error{Kind: de.Kind, Message: where + ": " + de.Message, Details: de.Details, RetryAfter: de.RetryAfter}
	}
	return fmt.Errorf("%s: %w", where, err)
}

// csvRowInput decodes a row's cells into a create body; d holds the cells
// that cannot be decoded.
func csvRowInput(ci *engine.Coll, cols []int, cells []string) (in map[string]any, d map[string]any) {
	in = make(map[string]any, len(cells))
	for j, fi := range cols {
		if fi < 0 {
			continue
		}
		f := ci.RowFields()[fi]
		v, msg := decodeCSVCell(f.Field, cells[j])
		if msg != "" {
			if d == nil {
				d = map[string]any{}
			}
			d[f.Name] = msg
			continue
		}
		if v != nil {
			in[f.Name] = v
		}
	}
	return in, d
}

// csvParseMessage is a CSV syntax error without the reader's position
// prefix (the row number says where).
func csvParseMessage(err error) string {
	var pe *stdcsv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}
