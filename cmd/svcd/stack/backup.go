package stack

import (
	"context"
	"errors"
	"io"
	"time"

	"svcd/cluster/blobs"
	"svcd/engine/backup"
)

// backupPeers adapts the blob channel's restores directory (cluster/blobs
// Dir) to the peers engine/backup owns.
type backupPeers struct{ d *blobs.Dir }

func (p backupPeers) Push(ctx context.Context, name, path string) error {
	err := p.d.Push(ctx, name, path)
	if errors.Is(err, blobs.ErrNoMajority) {
		return errors.Join(backup.ErrNoMajority, err)
	}
	return err
}

func (p backupPeers) Fetch(ctx context.Context, dir, name, sha256 string) error {
	return p.d.Fetch(ctx, dir, name, sha256)
}

// backupTargets opens backup destinations with the node's s3.* settings
// (cluster/blobs OpenTarget).
type backupTargets struct{ setting func(string) string }

func (t backupTargets) Open(ctx context.Context, to string) (backup.Target, error) {
	b, err := blobs.OpenTarget(ctx, to, blobs.S3ConfigFrom(t.setting))
	if err != nil {
		return nil, err
	}
	return backupTarget{b}, nil
}

// backupTarget is a blobs.Bucket as a backup.Target.
type backupTarget struct{ b *blobs.Bucket }

func (t backupTarget) Put(ctx context.Context, key string, r io.Reader) error {
	return t.b.Put(ctx, key, "application/vnd.sqlite3", r)
}

func (t backupTarget) List(ctx context.Context, fn func(key string) error) error {
	return t.b.List(ctx, func(key string, _ time.Time) error { return fn(key) })
}

func (t backupTarget) Delete(ctx context.Context, key string) error { return t.b.Delete(ctx, key) }
func (t backupTarget) Close() error                                 { return t.b.Close() }
