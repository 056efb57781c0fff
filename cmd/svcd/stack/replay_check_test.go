package stack_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"svcd/fsm"
)

// detSeed is SVCD_DET_SEED, or def.
func detSeed(t *testing.T, def uint64) uint64 {
	t.Helper()
	seed := def
	if s := os.Getenv("SVCD_DET_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SVCD_DET_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (set SVCD_DET_SEED to change)", seed)
	return seed
}

// replayed is the result of replayCheck: the batched replica (closed by
// the test's cleanup) and its digest.
type replayed struct {
	batched *replStore
	digest  map[string]string
	entries int
}

// replayCheck replays the Raft log of the closed node in dir into two
// fresh replicas, one in random batches of up to maxBatch entries and one
// entry at a time, and checks that both compute the same outcome for every
// entry, the outcome the proposer saw (outcomes), the same state as each
// other and as the node's own database, and the applied index of the
// log's last state-machine entry.
func replayCheck(t *testing.T, dir string, seed uint64, maxBatch int, outcomes map[uint64]detOutcome) replayed {
	t.Helper()
	origDigest, origApplied := replDigestFile(t, filepath.Join(dir, "data.db"))
	entries, first, last := replReadLog(t, dir)
	if first != 1 {
		t.Fatalf("raft log starts at %d: it was compacted, the replay would be partial", first)
	}
	if len(entries) == 0 {
		t.Fatal("empty raft log")
	}
	lastFSM := entries[len(entries)-1].Index
	t.Logf("raft log: %d entries (%d for the state machine), last index %d", last-first+1, len(entries), last)

	tmp := t.TempDir()
	batched := replOpenStore(t, filepath.Join(tmp, "batched.db"))
	t.Cleanup(func() { batched.Close() })
	single := replOpenStore(t, filepath.Join(tmp, "single.db"))
	defer single.Close()

	outA, outB := map[uint64]string{}, map[uint64]string{}
	r := rand.New(rand.NewPCG(seed, 2000))
	for i := 0; i < len(entries); {
		n := min(1+r.IntN(maxBatch), len(entries)-i)
		res := batched.ApplyBatch(entries[i : i+n])
		if len(res) != n {
			t.Fatalf("ApplyBatch of %d entries returned %d results", n, len(res))
		}
		for j, e := range entries[i : i+n] {
			if res[j].Skipped {
				t.Fatalf("batched replica skipped entry %d", e.Index)
			}
			outA[e.Index] = replOutcome(res[j].Err)
		}
		i += n
	}
	batched.checkFatal(t, "batched replay")
	for _, e := range entries {
		res := single.ApplyBatch([]fsm.Entry{e})
		if len(res) != 1 || res[0].Skipped {
			t.Fatalf("single replica: entry %d: results %+v", e.Index, res)
		}
		outB[e.Index] = replOutcome(res[0].Err)
	}
	single.checkFatal(t, "one-by-one replay")

	mismatches := 0
	for _, e := range entries {
		if outA[e.Index] != outB[e.Index] {
			if mismatches++; mismatches <= 10 {
				t.Errorf("entry %d: batched replica %q, one-by-one replica %q", e.Index, outA[e.Index], outB[e.Index])
			}
		}
	}
	for idx, o := range outcomes {
		if idx > lastFSM {
			t.Errorf("the proposer saw index %d, beyond the log's last state machine entry %d", idx, lastFSM)
			continue
		}
		if outA[idx] != o.result {
			if mismatches++; mismatches <= 20 {
				t.Errorf("entry %d (%s): the node answered %q, the replay computed %q", idx, o.op, o.result, outA[idx])
			}
		}
	}
	t.Logf("compared %d proposer outcomes over %d log entries", len(outcomes), len(entries))

	dA, dB := replDigest(t, batched.Store), replDigest(t, single.Store)
	if d := replDiff(dA, dB); d != "" {
		t.Errorf("batched and one-by-one replicas differ: %s", d)
	}
	if d := replDiff(origDigest, dA); d != "" {
		t.Errorf("the node's database and the replayed replica differ: %s", d)
	}
	if batched.AppliedIndex() != lastFSM || single.AppliedIndex() != lastFSM || origApplied != lastFSM {
		t.Errorf("applied indexes: node %d, batched %d, one-by-one %d; want %d",
			origApplied, batched.AppliedIndex(), single.AppliedIndex(), lastFSM)
	}
	return replayed{batched: batched, digest: dA, entries: len(entries)}
}
