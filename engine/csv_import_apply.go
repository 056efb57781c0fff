package engine

import (
	"errors"

	"svcd/engine/schema"
	"svcd/fsm"
)

// csvImportCmd is one chunk of a CSV import: up to csvChunkRows creates,
// each applied under its own nested savepoint, so a row that fails at
// apply time (a unique value another row or record already has, a relation
// target deleted meanwhile) fails alone and the others of its chunk are
// kept.
type csvImportCmd struct {
	Coll string         `json:"coll"`
	Ver  int64          `json:"ver"`
	Rows []csvImportRow `json:"rows"`
}

// csvImportRow is one row's create and its CSV row number (header = 1).
type csvImportRow struct {
	Row    int             `json:"row"`
	Create recordCreateCmd `json:"create"`
}

// csvChunkResult is the state machine's answer to a chunk: the rows that
// failed at apply time, in row order.
type csvChunkResult struct {
	Failed []CSVRowError `json:"failed,omitempty"`
}

func (e *Engine) applyCSVImport(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[csvImportCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := e.loadCollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	if ci.Type != schema.TypeBase {
		return nil, errCSVNotBase
	}
	out := &csvChunkResult{}
	for i := range c.Rows {
		r := &c.Rows[i]
		r.Create.Coll, r.Create.Ver = c.Coll, c.Ver
		err := tx.Nested(func() error {
			_, err := e.recordCreate(tx, &r.Create)
			return err
		})
		if err == nil {
			continue
		}
		// Only a domain error is the row's own; anything else (storage,
		// a command this node cannot apply) fails the whole chunk.
		de := AsError(err)
		if de == nil || errors.Is(err, ErrSchemaMoved) {
			return nil, err
		}
		out.Failed = append(out.Failed, CSVRowError{Row: r.Row, Details: csvErrorDetails(de)})
	}
	return out, nil
}

// csvErrorDetails is what a row's error reports: the field messages of a
// validation error, or the message under "_row".
func csvErrorDetails(de *Error) map[string]any {
	if len(de.Details) > 0 {
		return de.Details
	}
	return map[string]any{csvRowMessage: de.Message}
}
