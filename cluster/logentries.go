package cluster

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/raft"

	"svcd/fsm"
	"svcd/internal/progress"
)

// The stable store's keys (hashicorp/raft's raft.go).
const (
	keyCurrentTerm  = "CurrentTerm"
	keyLastVoteTerm = "LastVoteTerm"
)

// checkLogContents reads every entry of the opened log, first to last,
// through the library's own decoding (what Raft will do at start and
// later), and checks what a damaged byte could silently change: each
// entry's index and term (terms never decrease and never pass the current
// term), its type, a command's envelope and checksum (fsm.Decode), a
// membership change's configuration; and the stable store's values. The
// first problem is a *DamageError naming path and the entry. prog (nil:
// none) counts the entries read.
func checkLogContents(path string, logs raft.LogStore, sum *logFileSummary, prog *progress.Reporter) error {
	term, err := checkStable(sum)
	if err != nil {
		return &DamageError{File: path, What: err.Error()}
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return &DamageError{File: path, What: fmt.Sprintf("first index: %v", err)}
	}
	last, err := logs.LastIndex()
	if err != nil {
		return &DamageError{File: path, What: fmt.Sprintf("last index: %v", err)}
	}
	if first != sum.First || last != sum.Last {
		return &DamageError{File: path, What: fmt.Sprintf("the log reads as entries %d..%d, its pages hold %d..%d", first, last, sum.First, sum.Last)}
	}
	if last > 0 && term == 0 {
		return &DamageError{File: path, What: fmt.Sprintf("%d entries but no current term", last-first+1)}
	}
	if last > 0 {
		n := last - first + 1
		for _, g := range sum.Gaps {
			n -= g.Next - g.After - 1
		}
		prog.SetTotal(int64(n))
	}
	var prevTerm uint64
	gaps := sum.Gaps
	for idx := first; idx <= last && idx > 0; idx++ {
		if len(gaps) > 0 && idx == gaps[0].After+1 {
			idx, gaps = gaps[0].Next, gaps[1:] // a snapshot holds these (checkGaps)
		}
		var l raft.Log
		if err := getLogSafely(logs, idx, &l); err != nil {
			return &DamageError{File: path, Index: idx, What: fmt.Sprintf("cannot be read: %v", err)}
		}
		if what := checkEntry(&l, idx, prevTerm, term); what != "" {
			return &DamageError{File: path, Index: idx, What: what}
		}
		prevTerm = l.Term
		prog.Add(1)
		prog.AddBytes(int64(len(l.Data) + len(l.Extensions)))
	}
	return nil
}

// getLogSafely is logs.GetLog that turns a panic of the decoder, or a
// fault reading the memory-mapped file, into an error.
func getLogSafely(logs raft.LogStore, idx uint64, l *raft.Log) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while decoding: %v", r)
		}
	}()
	return logs.GetLog(idx, l)
}

// checkEntry says what is wrong with entry l read at idx ("" if nothing).
func checkEntry(l *raft.Log, idx, prevTerm, currentTerm uint64) string {
	switch {
	case l.Index != idx:
		return fmt.Sprintf("stored as entry %d, it says %d", idx, l.Index)
	case l.Term == 0:
		return "term 0"
	case l.Term < prevTerm:
		return fmt.Sprintf("term %d, below the previous entry's %d", l.Term, prevTerm)
	case l.Term > currentTerm:
		return fmt.Sprintf("term %d, above the node's current term %d", l.Term, currentTerm)
	}
	switch l.Type {
	case raft.LogCommand:
		if _, err := fsm.Decode(l.Data); err != nil {
			return fmt.Sprintf("command: %v", err)
		}
	case raft.LogNoop, raft.LogBarrier:
		if len(l.Data) != 0 {
			return fmt.Sprintf("a %s entry carrying %d bytes", l.Type, len(l.Data))
		}
	case raft.LogConfiguration:
		if err := checkConfigurationEntry(l.Data); err != nil {
			return fmt.Sprintf("membership change: %v", err)
		}
	default:
		return fmt.Sprintf("unknown entry type %d", l.Type)
	}
	return ""
}

// checkConfigurationEntry decodes a membership change as Raft will (its
// decoder panics on bad input) and checks it the way Raft checks a
// configuration it makes.
func checkConfigurationEntry(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return checkConfiguration(raft.DecodeConfiguration(data))
}

// checkConfiguration requires ids and addresses, each once, known
// suffrages and a voter.
func checkConfiguration(c raft.Configuration) error {
	ids, addrs, voters := map[raft.ServerID]bool{}, map[raft.ServerAddress]bool{}, 0
	for _, s := range c.Servers {
		switch {
		case s.ID == "" || s.Address == "":
			return fmt.Errorf("a server without an id or an address")
		case ids[s.ID] || addrs[s.Address]:
			return fmt.Errorf("server %q listed twice", s.ID)
		case s.Suffrage > raft.Staging:
			return fmt.Errorf("server %q has an unknown suffrage %d", s.ID, s.Suffrage)
		}
		ids[s.ID], addrs[s.Address] = true, true
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters == 0 {
		return fmt.Errorf("no voter")
	}
	return nil
}

// checkStable checks the stable store's terms (Raft reads each as 8
// bytes; the last vote is never in a later term than the current one) and
// returns the current term (0 when none is stored).
func checkStable(sum *logFileSummary) (uint64, error) {
	var terms [2]uint64
	for i, k := range []string{keyCurrentTerm, keyLastVoteTerm} {
		v, ok := sum.Conf[k]
		if !ok {
			continue
		}
		if len(v) != 8 {
			return 0, fmt.Errorf("stable store: %s has %d bytes, not 8", k, len(v))
		}
		terms[i] = binary.BigEndian.Uint64(v)
	}
	if terms[1] > terms[0] {
		return 0, fmt.Errorf("stable store: the last vote's term %d is above the current term %d", terms[1], terms[0])
	}
	return terms[0], nil
}
