package engine

import (
	"crypto/rand"
	"sync"
)

// recordIDPrefixLen is how many leading characters consecutive record ids
// share, and recordIDRun how many ids share one prefix before a new random
// prefix is drawn.
const (
	recordIDPrefixLen = 5
	recordIDRun       = 128
)

// recordIDs makes the ids of new records: 15 characters of [a-z0-9], each
// drawn uniformly at random like NewID's, except that runs of up to
// recordIDRun consecutive ids share their first recordIDPrefixLen
// characters (themselves random). Every id on its own is still uniform
// over the whole id space, and the ten characters after the prefix (about
// 52 bits) are fresh for every id, so knowing one id does not help guess
// another. What the run buys: the records of one batch or import chunk
// (and creates that arrive close together) land next to each other in the
// primary-key index instead of in a hundred different pages of it, so a
// batch's commit writes a few index pages, not one per row (measured in
// docs/benchmarks.md).
type recordIDs struct {
	mu     sync.Mutex
	prefix [recordIDPrefixLen]byte
	left   int
	buf    [256]byte // random bytes not used yet: buf[pos:]
	pos    int
}

func newRecordIDs() *recordIDs { return &recordIDs{pos: len(recordIDs{}.buf)} }

// next returns a new record id.
func (g *recordIDs) next() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var id [IDLength]byte
	if g.left == 0 {
		for i := range g.prefix {
			g.prefix[i] = g.char()
		}
		g.left = recordIDRun
	}
	g.left--
	copy(id[:], g.prefix[:])
	for i := recordIDPrefixLen; i < IDLength; i++ {
		id[i] = g.char()
	}
	return string(id[:])
}

// char draws one uniform character of idAlphabet, rejecting bytes past
// the largest multiple of 36 (252) as NewID does.
func (g *recordIDs) char() byte {
	for {
		if g.pos == len(g.buf) {
			rand.Read(g.buf[:])
			g.pos = 0
		}
		c := g.buf[g.pos]
		g.pos++
		if c < 252 {
			return idAlphabet[int(c)%36]
		}
	}
}
