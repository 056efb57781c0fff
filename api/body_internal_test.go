package api

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadAllCharged: the buffer a body is read into is charged before it
// is allocated, grows with the data that arrived (a large declared length
// allocates nothing ahead), holds exactly its capacity in charge once done,
// and a refused charge stops the read with the budget's 503.
func TestReadAllCharged(t *testing.T) {
	budget := &bodyBudget{}
	for _, c := range []struct {
		name     string
		data     string
		declared int64
		maxPeak  int64
	}{
		{"tiny body, huge declared length", "{}", 1 << 30, 512},
		{"exact declared length", strings.Repeat("x", 100_000), 100_000, 3 * 100_000},
		{"unknown length", strings.Repeat("x", 100_000), -1, 3 * 131072},
		{"empty", "", 0, 1},
	} {
		st := &bodyState{}
		var peak int64
		charge := func(n int64) error {
			err := st.charge(budget, 0, n)
			peak = max(peak, st.charged)
			return err
		}
		b, err := readAllCharged(strings.NewReader(c.data), c.declared, charge)
		if err != nil || string(b) != c.data {
			t.Errorf("%s: read %d bytes, %v", c.name, len(b), err)
		}
		if st.charged != int64(cap(b)) || budget.inUse() != st.charged {
			t.Errorf("%s: charged %d (budget %d) for a buffer of capacity %d", c.name, st.charged, budget.inUse(), cap(b))
		}
		if peak > c.maxPeak {
			t.Errorf("%s: charged up to %d bytes, want at most %d", c.name, peak, c.maxPeak)
		}
		budget.give(st.charged)
	}

	st := &bodyState{}
	_, err := readAllCharged(bytes.NewReader(make([]byte, 10_000)), -1, func(n int64) error { return st.charge(budget, 4096, n) })
	if !errors.Is(err, errBodyBudget) || errBodyBudget.RetryAfter != 1 {
		t.Fatalf("over the budget: %v", err)
	}
	if st.charged > 4096 || budget.inUse() != st.charged {
		t.Errorf("charged %d over a budget of 4096 (budget holds %d)", st.charged, budget.inUse())
	}
	budget.give(st.charged)
	if _, err := readAllCharged(iotest{}, -1, nil); err == nil {
		t.Error("a read error was swallowed")
	}
}

// iotest is a reader that fails.
type iotest struct{}

func (iotest) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
