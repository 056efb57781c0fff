package suite

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestBankCheck: the bank checker on hand-made histories passes a clean
// one (an unknown transfer applied, another not) and catches a read with
// another total, a negative balance, a duplicate transfer, a present
// failed transfer, a partial transfer, a lost acknowledged one, a
// transfer nobody sent, and nodes that diverge.
func TestBankCheck(t *testing.T) {
	initial := map[string]int64{"a": 100, "b": 100, "c": 100}
	sent := []bankTransfer{
		{ID: "t1", From: "a", To: "b", Amount: 10, Outcome: OK},
		{ID: "t2", From: "b", To: "c", Amount: 5, Outcome: Info}, // applied
		{ID: "t3", From: "c", To: "a", Amount: 7, Outcome: Info}, // not applied
		{ID: "t4", From: "a", To: "c", Amount: 3, Outcome: Fail},
	}
	applied := sent[:2]
	good := bankState{Balances: map[string]int64{"a": 90, "b": 105, "c": 105}, Transfers: applied}
	reads := []bankRead{
		{Node: "n1", Strong: true, Balances: map[string]int64{"a": 100, "b": 100, "c": 100}},
		{Node: "n2", Strong: false, Balances: map[string]int64{"a": 90, "b": 110, "c": 100}},
	}
	clone := func(s bankState) bankState {
		return bankState{Balances: maps.Clone(s.Balances), Transfers: slices.Clone(s.Transfers)}
	}
	nodes := func(states ...bankState) map[string]bankState {
		out := map[string]bankState{}
		for i, s := range states {
			out[string(rune('1'+i))] = s
		}
		return out
	}
	f, notes := checkBank(initial, sent, reads, nodes(good, clone(good), clone(good)))
	if !f.valid() || f.OK != 1 || f.Failed != 1 || f.Unknown != 2 || f.UnknownApplied != 1 || f.Reads != 2 || f.StrongReads != 1 || f.Nodes != 3 {
		t.Fatalf("clean history judged %s: %v", f, notes)
	}

	withRead := func(r bankRead) []bankRead { return append(slices.Clone(reads), r) }
	twice := clone(good)
	twice.Transfers = append(twice.Transfers, sent[0])
	failed := clone(good)
	failed.Transfers = append(failed.Transfers, sent[3])
	failed.Balances["a"], failed.Balances["c"] = 87, 108
	partial := clone(good) // t3's first PATCH and its record, not its second PATCH
	partial.Transfers = append(partial.Transfers, sent[2])
	partial.Balances["c"] = 98
	lost := clone(good) // t1 absent entirely
	lost.Transfers = lost.Transfers[1:]
	lost.Balances["a"], lost.Balances["b"] = 100, 95
	foreign := clone(good)
	foreign.Transfers[1].Amount = 6
	foreign.Balances["b"], foreign.Balances["c"] = 104, 106
	noT2 := bankState{Balances: map[string]int64{"a": 90, "b": 110, "c": 100}, Transfers: sent[:1]}

	cases := []struct {
		name  string
		reads []bankRead
		final map[string]bankState
		want  func(bankFigures) bool
		note  string
	}{
		{"changed total", withRead(bankRead{Node: "n3", Strong: true, Balances: map[string]int64{"a": 90, "b": 100, "c": 100}}), nodes(good),
			func(f bankFigures) bool { return f.BadReads == 1 }, "a strong read on n3 saw total 290 over 3 accounts, not 300"},
		{"missing account", withRead(bankRead{Node: "n3", Balances: map[string]int64{"a": 200, "b": 100}}), nodes(good),
			func(f bankFigures) bool { return f.BadReads == 1 }, "a local read on n3 saw total 300 over 2 accounts"},
		{"negative", withRead(bankRead{Node: "n1", Balances: map[string]int64{"a": -5, "b": 205, "c": 100}}), nodes(good),
			func(f bankFigures) bool { return f.Negative == 1 && f.BadReads == 0 }, "negative balance: a=-5"},
		{"duplicate transfer", reads, nodes(twice),
			func(f bankFigures) bool { return f.Duplicates == 1 }, "holds transfer t1 twice"},
		{"failed transfer present", reads, nodes(failed),
			func(f bankFigures) bool { return f.FailedPresent == 1 && f.Unbalanced == 0 }, "transfer t4, whose batch failed"},
		{"partial transfer", reads, nodes(partial),
			func(f bankFigures) bool { return f.Unbalanced == 1 && f.TotalChanged == 1 }, "account a holds 90, the initial balance plus its 3 transfers present make 97"},
		{"lost", reads, nodes(good, lost),
			func(f bankFigures) bool { return f.Lost == 1 && f.Diverged == 1 && f.Unbalanced == 0 }, "lacks acknowledged transfer t1"},
		{"foreign", reads, nodes(foreign),
			func(f bankFigures) bool { return f.Foreign == 1 }, "never sent so"},
		{"diverged", reads, nodes(good, noT2),
			func(f bankFigures) bool { return f.Diverged == 1 && f.Unbalanced == 0 }, "2 ends with a=90 b=110 c=100 and 1 transfers"},
		{"no node", reads, nil,
			func(f bankFigures) bool { return f.Nodes == 0 }, "no node's final state"},
	}
	for _, c := range cases {
		f, notes := checkBank(initial, sent, c.reads, c.final)
		if all := strings.Join(notes, "\n"); f.valid() || !c.want(f) || !strings.Contains(all, c.note) {
			t.Errorf("%s: judged %s, notes %q; want it caught with %q", c.name, f, all, c.note)
		}
	}
}
