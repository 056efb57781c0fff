package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"

	"svcd/internal/progress"
)

// raft-boltdb keeps the log in the bucket "logs" (8-byte big-endian index
// -> msgpack-encoded raft.Log) and the stable store (current term, last
// vote) in the bucket "conf".
const (
	logsBucket = "logs"
	confBucket = "conf"
)

// logFileSummary is what the structural check learns of a raft.db.
type logFileSummary struct {
	// First and Last are the log's first and last index (0: no entry).
	First, Last uint64
	// Conf holds the stable store's keys and values.
	Conf map[string][]byte
	// Gaps are the places where the entries skip indexes. Raft leaves one
	// when a follower installs a snapshot past its last entry: it keeps
	// its trailing entries and appends after the snapshot's index. A gap
	// is sound only when a snapshot holds the missing entries
	// (checkGaps).
	Gaps []logGap
}

// logGap is entries After+1 .. Next-1 missing from the log.
type logGap struct{ After, Next uint64 }

// scanLogFile checks the structure of the Raft log file at path without
// bbolt (boltfile.go), and raft-boltdb's layout in it: both buckets, plain
// values, 8-byte keys without a gap. A missing or empty file is an empty
// log. Damage is a *DamageError; the file is only read. prog (nil: none)
// counts the bytes of the pages read, against the file's size.
func scanLogFile(path string, prog *progress.Reporter) (*logFileSummary, error) {
	sum := &logFileSummary{Conf: map[string][]byte{}}
	bf, err := openBoltFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, errBoltEmpty):
		return sum, nil
	case err != nil:
		return nil, asDamage(path, 0, err)
	}
	defer bf.Close()
	prog.SetTotalBytes(bf.size)
	w := &boltWalk{bf: bf, seen: map[uint64]bool{}, prog: prog}
	buckets := map[string][]byte{}
	var last []byte
	err = w.walkPage(bf.meta.root, 0, &last, func(k, v []byte, flags uint32) error {
		if flags&boltBucketLeafFlag == 0 {
			return damagef("the root bucket holds a plain key %q", k)
		}
		buckets[string(k)] = v
		return nil
	})
	if err != nil {
		return nil, asDamage(path, 0, fmt.Errorf("root bucket: %w", err))
	}
	for _, name := range []string{logsBucket, confBucket} {
		if buckets[name] == nil {
			return nil, asDamage(path, 0, damagef("the bucket %q is missing", name))
		}
	}
	if err := w.walkBucket(buckets[logsBucket], sum.visitLog); err != nil {
		// The entries up to the last one visited are intact.
		next := sum.Last + 1
		if sum.Last == 0 {
			next = 0
		}
		return nil, asDamage(path, next, fmt.Errorf("bucket %s: %w", logsBucket, err))
	}
	err = w.walkBucket(buckets[confBucket], func(k, v []byte, flags uint32) error {
		if flags != 0 {
			return damagef("a nested bucket %q", k)
		}
		sum.Conf[string(k)] = v
		return nil
	})
	if err != nil {
		return nil, asDamage(path, 0, fmt.Errorf("bucket %s: %w", confBucket, err))
	}
	names := make([]string, 0, len(buckets))
	for name := range buckets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name != logsBucket && name != confBucket {
			if err := w.walkNested(buckets[name], 1); err != nil {
				return nil, asDamage(path, 0, fmt.Errorf("bucket %q: %w", name, err))
			}
		}
	}
	if err := w.checkFreelist(); err != nil {
		return nil, asDamage(path, 0, err)
	}
	return sum, nil
}

// visitLog checks one key of the logs bucket: an index above the previous
// one (a gap is recorded, for checkGaps), and a value.
func (s *logFileSummary) visitLog(k, v []byte, flags uint32) error {
	if flags != 0 {
		return damagef("a nested bucket among the entries")
	}
	if len(k) != 8 {
		return damagef("a key of %d bytes among the entries", len(k))
	}
	idx := binary.BigEndian.Uint64(k)
	switch {
	case idx == 0:
		return damagef("an entry with index 0")
	case s.Last != 0 && idx <= s.Last:
		return damagef("entry %d follows entry %d", idx, s.Last)
	case len(v) == 0:
		return damagef("entry %d is empty", idx)
	}
	if s.First == 0 {
		s.First = idx
	}
	if s.Last != 0 && idx != s.Last+1 {
		s.Gaps = append(s.Gaps, logGap{After: s.Last, Next: idx})
	}
	s.Last = idx
	return nil
}

// asDamage turns a structural problem into a *DamageError for path (index
// is the first entry not known to be intact, 0 when the damage is not in
// an entry); other errors (reading the file) pass through.
func asDamage(path string, index uint64, err error) error {
	var bd *boltDamage
	if !errors.As(err, &bd) {
		return fmt.Errorf("cluster: read %s: %w", path, err)
	}
	return &DamageError{File: path, Index: index, What: err.Error()}
}
