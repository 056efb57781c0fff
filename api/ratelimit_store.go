package api

import (
	"hash/maphash"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// bucketKey identifies who a bucket counts: keyIP with the client address
// (IPv6 cut to its /64) in the first 16 bytes, or keyToken with the SHA-256
// of the credential.
type bucketKey struct {
	kind byte
	id   [32]byte
}

const (
	keyIP byte = iota + 1
	keyToken
)

// Memory bounds. A bucket idle for a whole window has refilled to max, so
// dropping it loses nothing; the cap only matters when more distinct keys
// than it arrive within one window (then an arbitrary bucket is dropped,
// which errs towards letting a request through).
const (
	bucketShards       = 64
	maxBucketsPerShard = 4096 // 262144 keys per rule
)

var bucketSeed = maphash.MakeSeed()

// bucketStore holds the token buckets of one rule, sharded by key.
type bucketStore struct {
	limit  rate.Limit
	burst  int
	idle   int64 // nanoseconds after which an unused bucket is full again
	shards [bucketShards]bucketShard
}

type bucketShard struct {
	mu        sync.Mutex
	m         map[bucketKey]*bucket
	nextSweep int64
}

type bucket struct {
	lim  *rate.Limiter
	last int64 // unix nanoseconds of the last use
}

func newBucketStore(limit rate.Limit, burst int, window time.Duration) *bucketStore {
	return &bucketStore{limit: limit, burst: burst, idle: int64(window)}
}

// get returns the bucket of k, creating it full, and marks it used at now.
func (st *bucketStore) get(k bucketKey, now time.Time) *rate.Limiter {
	sh := &st.shards[maphash.Bytes(bucketSeed, k.id[:])%bucketShards]
	ns := now.UnixNano()
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[bucketKey]*bucket)
	}
	if ns >= sh.nextSweep {
		sh.sweep(ns, st.idle)
		sh.nextSweep = ns + max(st.idle, int64(time.Second))
	}
	b := sh.m[k]
	if b == nil {
		if len(sh.m) >= maxBucketsPerShard {
			for victim := range sh.m {
				delete(sh.m, victim)
				break
			}
		}
		b = &bucket{lim: rate.NewLimiter(st.limit, st.burst)}
		sh.m[k] = b
	}
	b.last = ns
	sh.mu.Unlock()
	return b.lim
}

// sweep drops the buckets unused for idle nanoseconds.
func (sh *bucketShard) sweep(ns, idle int64) {
	for k, b := range sh.m {
		if ns-b.last >= idle {
			delete(sh.m, k)
		}
	}
}

// size counts the buckets held (for tests).
func (st *bucketStore) size() int {
	n := 0
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}
