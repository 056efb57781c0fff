package csv

import (
	"errors"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// importCmd is one chunk of a CSV import: up to csvChunkRows creates,
// each applied under its own nested savepoint, so a row that fails at
// apply time (a unique value another row or record already has, a relation
// target deleted meanwhile) fails alone and the others of its chunk are
// kept.
type importCmd struct {
	Coll string      `json:"coll"`
	Ver  int64       `json:"ver"`
	Rows []importRow `json:"rows"`
}

// importRow is one row's create and its CSV row number (header = 1).
type importRow struct {
	Row    int                 `json:"row"`
	Create engine.RecordCreate `json:"create"`
}

// chunkResult is the state machine's answer to a chunk: the rows that
// failed at apply time, in row order.
type chunkResult struct {
	Failed []RowError `json:"failed,omitempty"`
}

func (m *CSV) applyImport(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[importCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := m.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	if ci.Type != schema.TypeBase {
		return nil, errCSVNotBase
	}
	// Rows rarely fail at apply time: try the chunk under one savepoint
	// first (two statements, not two per row), and only when a row fails
	// roll it back and apply row by row, which decides exactly as if the
	// fast attempt had not run.
	var slow error
	err = tx.Nested(func() error {
		for i := range c.Rows {
			if err := m.core.Records().ApplyRecordCreate(tx, ci, &c.Rows[i].Create); err != nil {
				slow = err
				return err
			}
		}
		return nil
	})
	if err == nil {
		return &chunkResult{}, nil
	}
	if de := engine.AsError(slow); slow == nil || de == nil || errors.Is(slow, engine.ErrSchemaMoved) {
		return nil, err
	}
	out := &chunkResult{}
	for i := range c.Rows {
		r := &c.Rows[i]
		err := tx.Nested(func() error {
			return m.core.Records().ApplyRecordCreate(tx, ci, &r.Create)
		})
		if err == nil {
			continue
		}
		// Only a domain error is the row's own; anything else (storage,
		// a command this node cannot apply) fails the whole chunk.
		de := engine.AsError(err)
		if de == nil || errors.Is(err, engine.ErrSchemaMoved) {
			return nil, err
		}
		out.Failed = append(out.Failed, RowError{Row: r.Row, Details: csvErrorDetails(de)})
	}
	return out, nil
}

// csvErrorDetails is what a row's error reports: the field messages of a
// validation error, or the message under "_row".
func csvErrorDetails(de *engine.Error) map[string]any {
	if len(de.Details) > 0 {
		return de.Details
	}
	return map[string]any{csvRowMessage: de.Message}
}
