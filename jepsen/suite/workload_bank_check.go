package suite

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The bank workload's checker: a pure function of the transfers sent, the
// reads made and every node's final state, so hand-made histories test it.

// bankTransfer is one transfer: the id of the transfers record its batch
// creates, the accounts and the amount, and (for a transfer sent) how its
// batch ended.
type bankTransfer struct {
	ID       string
	From, To string
	Amount   int64
	Outcome  Outcome
	Node     string
}

// bankRead is one read of every account in one list request (one SQL
// statement, so one snapshot of the state machine).
type bankRead struct {
	Node     string
	Strong   bool
	Balances map[string]int64
}

// bankState is what one node holds at the end.
type bankState struct {
	Balances  map[string]int64
	Transfers []bankTransfer // From, To, Amount as stored; no Outcome
}

// bankFigures are the bank workload's counts.
type bankFigures struct {
	OK, Failed, Unknown int
	// UnknownApplied are the transfers with an unknown outcome that the
	// final state holds (the others are absent, entirely).
	UnknownApplied int
	// Reads are the checked snapshot reads (StrongReads of them strong);
	// BadReads had another total or account set than the initial one;
	// Negative had an account below zero (no transfer takes more than the
	// balance it read, and If-Match makes that read current).
	Reads, StrongReads, BadReads, Negative int
	Nodes                                  int
	// Diverged are nodes whose final accounts or transfers differ from
	// the first node's.
	Diverged int
	// Lost: acknowledged transfers absent on some node. Duplicates:
	// transfer ids present more than once on a node. FailedPresent:
	// transfers whose batch definitely failed, yet present. Foreign:
	// transfers present that were never sent as stored (another id,
	// accounts or amount). Unbalanced: accounts whose final balance is not
	// the initial balance plus the transfers present (a partial or doubled
	// batch); TotalChanged: nodes whose final total is not the initial.
	Lost, Duplicates, FailedPresent, Foreign int
	Unbalanced, TotalChanged                 int
}

func (f bankFigures) valid() bool {
	return f.BadReads == 0 && f.Negative == 0 && f.Diverged == 0 && f.Lost == 0 && f.Duplicates == 0 &&
		f.FailedPresent == 0 && f.Foreign == 0 && f.Unbalanced == 0 && f.TotalChanged == 0 && f.Nodes > 0
}

func (f bankFigures) String() string {
	return fmt.Sprintf("transfers ok %d, failed %d, unknown %d (%d applied); reads %d (%d strong): %d bad totals, %d negative; "+
		"%d nodes, %d diverged; lost %d, duplicates %d, failed present %d, foreign %d, unbalanced accounts %d, total changed on %d",
		f.OK, f.Failed, f.Unknown, f.UnknownApplied, f.Reads, f.StrongReads, f.BadReads, f.Negative,
		f.Nodes, f.Diverged, f.Lost, f.Duplicates, f.FailedPresent, f.Foreign, f.Unbalanced, f.TotalChanged)
}

// maxBankNotes bounds the violation notes (the figures count them all).
const maxBankNotes = 20

// checkBank judges a bank history: initial balances, the transfers sent,
// the snapshot reads and each node's final state (by node name).
func checkBank(initial map[string]int64, sent []bankTransfer, reads []bankRead, final map[string]bankState) (bankFigures, []string) {
	var f bankFigures
	var notes []string
	note := func(format string, args ...any) {
		if len(notes) < maxBankNotes {
			notes = append(notes, fmt.Sprintf(format, args...))
		}
	}
	total := bankSum(initial)
	byID := map[string]bankTransfer{}
	for _, t := range sent {
		byID[t.ID] = t
		switch t.Outcome {
		case OK:
			f.OK++
		case Fail:
			f.Failed++
		default:
			f.Unknown++
		}
	}

	for _, r := range reads {
		f.Reads++
		if r.Strong {
			f.StrongReads++
		}
		kind := "local"
		if r.Strong {
			kind = "strong"
		}
		if got := bankSum(r.Balances); got != total || !bankSameKeys(r.Balances, initial) {
			f.BadReads++
			note("a %s read on %s saw total %d over %d accounts, not %d over %d: %s", kind, r.Node, got, len(r.Balances), total, len(initial), bankBalances(r.Balances))
		}
		if slices.ContainsFunc(slices.Collect(maps.Values(r.Balances)), func(b int64) bool { return b < 0 }) {
			f.Negative++
			note("a %s read on %s saw a negative balance: %s", kind, r.Node, bankBalances(r.Balances))
		}
	}

	names := slices.Sorted(maps.Keys(final))
	f.Nodes = len(names)
	lost := map[string]bool{}
	applied := map[string]bool{}
	var first bankState
	for i, name := range names {
		st := final[name]
		present := map[string]bankTransfer{}
		for _, t := range st.Transfers {
			if _, dup := present[t.ID]; dup {
				f.Duplicates++
				note("%s holds transfer %s twice", name, t.ID)
			}
			present[t.ID] = t
		}
		if i == 0 {
			first = st
		} else if !maps.Equal(st.Balances, first.Balances) || !bankSameTransfers(st.Transfers, first.Transfers) {
			f.Diverged++
			note("%s ends with %s and %d transfers, %s with %s and %d", name, bankBalances(st.Balances), len(st.Transfers),
				names[0], bankBalances(first.Balances), len(first.Transfers))
		}
		want := maps.Clone(initial)
		for id, t := range present {
			s, ok := byID[id]
			if !ok || s.From != t.From || s.To != t.To || s.Amount != t.Amount {
				f.Foreign++
				note("%s holds transfer %s (%s -> %s, %d), which was never sent so", name, id, t.From, t.To, t.Amount)
				continue
			}
			want[t.From] -= t.Amount
			want[t.To] += t.Amount
			switch s.Outcome {
			case Fail:
				f.FailedPresent++
				note("%s holds transfer %s, whose batch failed", name, id)
			case Info:
				applied[id] = true
			}
		}
		for _, t := range sent {
			if _, ok := present[t.ID]; t.Outcome == OK && !ok {
				lost[t.ID] = true
				note("%s lacks acknowledged transfer %s", name, t.ID)
			}
		}
		for _, acct := range slices.Sorted(maps.Keys(bankUnion(want, st.Balances))) {
			got, ok := st.Balances[acct]
			if w := want[acct]; !ok || got != w {
				f.Unbalanced++
				note("%s: account %s holds %d, the initial balance plus its %d transfers present make %d", name, acct, got, len(present), w)
			}
		}
		if got := bankSum(st.Balances); got != total {
			f.TotalChanged++
			note("%s ends with total %d, not %d", name, got, total)
		}
	}
	f.Lost, f.UnknownApplied = len(lost), len(applied)
	if f.Nodes == 0 {
		note("no node's final state was read")
	}
	return f, notes
}

func bankSum(m map[string]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}

func bankSameKeys(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func bankUnion(a, b map[string]int64) map[string]int64 {
	out := maps.Clone(a)
	for k, v := range b {
		out[k] = v
	}
	return out
}

func bankSameTransfers(a, b []bankTransfer) bool {
	key := func(ts []bankTransfer) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = fmt.Sprintf("%s %s %s %d", t.ID, t.From, t.To, t.Amount)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// bankBalances is m as "a=1 b=2", sorted by account.
func bankBalances(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
