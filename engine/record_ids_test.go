package engine

import "testing"

func TestRecordIDsShareARandomPrefixPerRun(t *testing.T) {
	g := newRecordIDs()
	seen := map[string]bool{}
	prefixes := map[string]bool{}
	counts := map[byte]int{}
	const runs = 200
	for r := 0; r < runs; r++ {
		var prefix string
		for i := 0; i < recordIDRun; i++ {
			id := g.next()
			if !ValidRecordID(id) {
				t.Fatalf("id %q does not have the record id form", id)
			}
			if seen[id] {
				t.Fatalf("id %q made twice", id)
			}
			seen[id] = true
			if i == 0 {
				prefix = id[:recordIDPrefixLen]
			} else if id[:recordIDPrefixLen] != prefix {
				t.Fatalf("run %d, id %d: prefix %q, want %q", r, i, id[:recordIDPrefixLen], prefix)
			}
			for j := recordIDPrefixLen; j < IDLength; j++ {
				counts[id[j]]++
			}
		}
		prefixes[prefix] = true
	}
	if len(prefixes) < runs-1 { // 36^5 prefixes: a repeat is very unlikely
		t.Fatalf("%d distinct prefixes over %d runs", len(prefixes), runs)
	}
	// Every character of the alphabet appears about equally often after
	// the prefix (256,000 draws, 7,111 expected each).
	if len(counts) != len(idAlphabet) {
		t.Fatalf("%d distinct characters, want %d", len(counts), len(idAlphabet))
	}
	for c, n := range counts {
		if n < 6500 || n > 7700 {
			t.Errorf("character %q drawn %d times, want about 7,111", c, n)
		}
	}
}
