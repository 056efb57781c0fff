package engine

import (
	"fmt"

	"svcd/engine/schema"
)

// CSV export and import of a base collection (SPEC.md "CSV"): the export
// streams every record, the import creates one record per row through the
// log, in chunks.
const (
	// CSVMaxErrors is how many row errors an import reports (SPEC.md
	// limits); the failed count still counts every failed row.
	CSVMaxErrors = 50
	// csvChunkRows is how many rows one import command carries.
	csvChunkRows = 100
	// csvExportPage is how many rows the export reads per read
	// transaction: the memory an export holds, whatever the collection's
	// size.
	csvExportPage = 1000
)

// errCSVNotBase answers CSV on a view or auth collection.
var errCSVNotBase = &Error{Kind: KindValidation, Message: "CSV import and export serve base collections only",
	Details: map[string]any{"collection": "must be a base collection"}}

// csvCollection resolves a collection for CSV: 404 when there is none, 422
// unless it is a base collection.
func (e *Engine) csvCollection(name string) (*Coll, error) {
	ci := e.collection(name)
	if ci == nil {
		return nil, ErrNotFound
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
