package engine

import (
	"errors"
	"testing"

	"svcd/fsm"
)

// A cutoff for a pruner the binary lacks (a newer leader during a rolling
// upgrade) stops the node at the entry instead of skipping the pruner
// and leaving its tables different from the other nodes'.
func TestPruneUnknownPrunerHalts(t *testing.T) {
	e := &Engine{}
	e.reg.pruners = []Pruner{{Name: "audit"}}
	cmd, err := encodeCmd(cmdPrune, pruneCmd{Cutoffs: map[string]int64{"audit": 1, "from_the_future": 1}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.applyPrune(nil, cmd); !errors.Is(err, fsm.ErrHalt) {
		t.Fatalf("err = %v, want a halt", err)
	}
}
