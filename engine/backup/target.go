package backup

import (
	"context"
	"io"
)

// Targets opens where backups are written: backup.to, a directory on the
// node's machine or s3://bucket/prefix (the bucket reached with the s3.*
// settings). The composition root implements it with gocloud.dev/blob
// (cluster/blobs).
type Targets interface {
	Open(ctx context.Context, to string) (Target, error)
}

// Target is an open destination. Keys are relative to the destination
// (its prefix applied by the implementation).
type Target interface {
	// Put stores r under key; nothing is left under key when it fails.
	Put(ctx context.Context, key string, r io.Reader) error
	// List calls fn with every key of the destination.
	List(ctx context.Context, fn func(key string) error) error
	// Delete removes key.
	Delete(ctx context.Context, key string) error
	Close() error
}
