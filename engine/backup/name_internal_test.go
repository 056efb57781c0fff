package backup

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"
)

// memTarget is a destination in memory.
type memTarget struct{ keys []string }

func (m *memTarget) Put(_ context.Context, key string, r io.Reader) error {
	m.keys = append(m.keys, key)
	return nil
}

func (m *memTarget) List(_ context.Context, fn func(string) error) error {
	for _, k := range m.keys {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

func (m *memTarget) Delete(_ context.Context, key string) error {
	m.keys = slices.DeleteFunc(m.keys, func(k string) bool { return k == key })
	return nil
}

func (m *memTarget) Close() error { return nil }

// TestPruneKeepsTheNewest: the retention orders backups by their time,
// then by their index as a number (two in one second), and deletes only
// names the service writes.
func TestPruneKeepsTheNewest(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	name := func(sec int, idx uint64, gz bool) string {
		n := (&Copy{At: at.Add(time.Duration(sec) * time.Second), Index: idx}).Name()
		if gz {
			n += ".gz"
		}
		return n
	}
	m := &memTarget{keys: []string{
		name(0, 9, false), name(0, 10, true), name(1, 11, false), name(1, 100, false),
		"notes.txt", "svcd-backup-elsewhere.db", name(2, 12, false) + ".tmp",
	}}
	n, err := prune(context.Background(), m, 2)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	want := []string{"notes.txt", "svcd-backup-elsewhere.db", name(2, 12, false) + ".tmp", name(1, 11, false), name(1, 100, false)}
	slices.Sort(want)
	got := slices.Clone(m.keys)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	if n, _ := prune(context.Background(), m, 0); n != 0 {
		t.Fatalf("keep 0 pruned %d", n)
	}
}

// TestSchedules: backup.schedule takes five cron fields (UTC) and
// descriptors, and refuses anything else.
func TestSchedules(t *testing.T) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for spec, want := range map[string]time.Time{
		"0 3 * * *":    time.Date(2026, 1, 3, 3, 0, 0, 0, time.UTC),
		"*/15 * * * *": time.Date(2026, 1, 2, 3, 15, 0, 0, time.UTC),
		"@hourly":      time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC),
		"@every 6h":    from.Add(6 * time.Hour),
	} {
		s, err := parseSchedule(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if got := s.Next(from).UTC(); !got.Equal(want) {
			t.Errorf("%q: next %v, want %v", spec, got, want)
		}
	}
	for _, bad := range []string{"daily", "0 3 * *", "61 * * * *", "@every"} {
		if _, err := parseSchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
