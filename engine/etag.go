package engine

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"svcd/fsm"
)

// Entity tags. A record's weak ETag changes whenever any stored value of
// its row changes, or the collection's shape does, and every replica
// computes the same one, so If-Match is decided at apply time. It is a
// keyed hash: HMAC-SHA-256 of the row under a random key that lives in the
// database (_svc_keys, written by the internal schema migration to version
// 5 with a key the proposing leader drew), so it is the same on every node
// and reveals nothing of values the caller cannot read. An unkeyed hash of
// the row let an anonymous caller recover a hidden four-digit pin offline
// in under a second. A database whose log is replayed from before that
// migration uses the unkeyed hash until the migration's entry, on every
// node alike.

// etagKeyName names the key in _svc_keys, which exists from internal
// schema version etagKeySince on.
const (
	etagKeyName  = "etag"
	etagKeySince = 5
)

// newETagKey draws the key a migration to version 5 installs.
func newETagKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("engine: random: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// etag is the tag of row of ci on this replica (the cached key).
func (e *Engine) etag(ci *Coll, row []any) string {
	var key []byte
	if k := e.etagKey.Load(); k != nil {
		key = *k
	}
	return etagWith(key, ci, row)
}

// etagTx is the tag of row of ci as the transaction sees the key.
func etagTx(tx *fsm.Tx, ci *Coll, row []any) (string, error) {
	v, err := internalVersionTx(tx)
	if err != nil || v < etagKeySince {
		return etagWith(nil, ci, row), err
	}
	var key []byte
	err = tx.QueryRow(`SELECT key FROM _svc_keys WHERE name = ?`, etagKeyName).Scan(&key)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	return etagWith(key, ci, row), nil
}

// etagWith is the tag of row of ci under key (nil: unkeyed, before the
// key existed).
func etagWith(key []byte, ci *Coll, row []any) string {
	var sum uint64
	if key == nil {
		h := fnv.New64a()
		fsm.HashValues(h, row)
		sum = h.Sum64()
	} else {
		h := hmac.New(sha256.New, key)
		fsm.HashValues(h, row)
		sum = binary.BigEndian.Uint64(h.Sum(nil))
	}
	b := make([]byte, 0, 48)
	b = append(b, `W/"`...)
	b = append(b, AsString(row[0])...)
	b = append(b, '-')
	b = strconv.AppendUint(b, sum, 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, ci.Version, 10)
	return string(append(b, '"'))
}

// reloadETagKey caches the key this replica holds (none before version 5).
func (e *Engine) reloadETagKey(ctx context.Context) error {
	var key []byte
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		if e.version.Load() < etagKeySince {
			return nil
		}
		err := r.QueryRow(`SELECT key FROM _svc_keys WHERE name = ?`, etagKeyName).Scan(&key)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("engine: load etag key: %w", err)
	}
	if key == nil {
		e.etagKey.Store(nil)
	} else {
		e.etagKey.Store(&key)
	}
	return nil
}
