// Package csv is the CSV module of the engine (SPEC.md "CSV"): the export
// of a base collection, streamed by id in pages, and the import that
// creates one record per row through the log, in chunks of csvChunkRows
// rows per command (record.csv_import). It registers its command and the
// command's result codec on the core when it is wired (New). Both log
// their progress through the core's logger (internal/progress): a line
// every Options.ProgressInterval while they run, a summary at the end.
package csv

import (
	"fmt"
	"time"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

const (
	// MaxErrors is how many row errors an import reports (SPEC.md
	// limits); the failed count still counts every failed row.
	MaxErrors = 50
	// csvChunkRows and csvChunkBytes bound one import command: up to 500
	// rows, fewer when their cells pass 256 KiB, so a log entry stays
	// small enough to replicate in one append whatever the rows' size.
	// Per command, the log, the fsync and the apply transaction cost the
	// same: 500 rows rather than 100 took a fifth off an import's CPU per
	// row (docs/benchmarks.md).
	csvChunkRows  = 500
	csvChunkBytes = 256 << 10
	// csvExportPage is how many rows the export reads per read
	// transaction: the memory an export holds, whatever the collection's
	// size.
	csvExportPage = 1000
)

// cmdImport is one chunk of a CSV import (import_apply.go). Numbers are
// never reused.
const cmdImport fsm.Type = 81

// CSV exports and imports the records of base collections (the module's
// face for the HTTP layer: ExportCSV, ImportCSV).
type CSV struct {
	core     *engine.Engine
	progress time.Duration
}

// Options configure the CSV module.
type Options struct {
	// ProgressInterval is the time between two progress lines of an
	// import or an export (0: progress.DefaultInterval, 5 s).
	ProgressInterval time.Duration
}

// New wires the CSV module to core: the import's command and its result.
func New(core *engine.Engine, opts Options) *CSV {
	m := &CSV{core: core, progress: opts.ProgressInterval}
	engine.RegisterResult[chunkResult](core, "csv")
	core.Command(cmdImport, "record.csv_import", m.applyImport)
	return m
}

// errCSVNotBase answers CSV on a view or auth collection.
var errCSVNotBase = &engine.Error{Kind: engine.KindValidation, Message: "CSV import and export serve base collections only",
	Details: map[string]any{"collection": "must be a base collection"}}

// collection resolves a collection for CSV: 404 when there is none, 422
// unless it is a base collection.
func (m *CSV) collection(name string) (*engine.Coll, error) {
	ci := m.core.Coll(name)
	if ci == nil {
		return nil, engine.ErrNotFound
	}
	if ci.Type != schema.TypeBase {
		return nil, errCSVNotBase
	}
	return ci, nil
}

// csvRowMessage is the details key of a problem with a row as a whole
// (its shape, not one field's value).
const csvRowMessage = "_row"

func csvRowError(format string, args ...any) map[string]any {
	return map[string]any{csvRowMessage: fmt.Sprintf(format, args...)}
}
