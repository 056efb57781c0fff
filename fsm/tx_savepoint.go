package fsm

import "fmt"

// Nested runs fn under a savepoint nested in the command's own: when fn
// returns an error, the statements it ran and the events it emitted are
// undone and the error is returned, and the command goes on with what it
// did before. A handler uses it to let one part of a command fail alone
// (one row of a CSV import chunk); it must decide from the error alone,
// which every node sees the same, whether to go on.
func (t *Tx) Nested(fn func() error) error {
	mark := len(t.events)
	if _, err := t.w.exec(true, "SAVEPOINT nested", nil); err != nil {
		return fmt.Errorf("fsm: nested savepoint: %w", err)
	}
	err := fn()
	if err != nil {
		t.events = t.events[:mark]
		if _, rerr := t.w.exec(true, "ROLLBACK TO nested", nil); rerr != nil {
			return fmt.Errorf("fsm: roll back nested savepoint: %w", rerr)
		}
	}
	if _, rerr := t.w.exec(true, "RELEASE nested", nil); rerr != nil {
		return fmt.Errorf("fsm: release nested savepoint: %w", rerr)
	}
	return err
}
