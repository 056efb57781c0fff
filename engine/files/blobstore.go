package files

import (
	"context"
	"io"
	"time"

	"svcd/engine"
)

// The interfaces the module needs from the outside, owned here and
// implemented elsewhere: blob stores (cluster/blobs: gocloud.dev/blob's
// fileblob and s3blob), the credentials check (engine/auth) and the
// thumbnailer (engine/files/thumb).

// BlobStore keeps the bytes of files under their stored names.
//
// The seam for cluster durability: a store that answers Put only once the
// bytes are on a majority of the voters, and whose Open fetches a blob it
// lacks from a peer, makes every acknowledged upload survive what an
// acknowledged record survives; nothing in this module changes.
type BlobStore interface {
	// Put stores what r yields under key. When r fails (a size limit, a
	// client gone) or ctx ends, the write is abandoned and nothing is
	// stored under key.
	Put(ctx context.Context, key, contentType string, r io.Reader) error
	// Open opens key; an error satisfying errors.Is(err, fs.ErrNotExist)
	// when there is no such blob.
	Open(ctx context.Context, key string) (Blob, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List calls fn for every stored key with its modification time.
	List(ctx context.Context, fn func(key string, modified time.Time) error) error
	// Shared reports whether every node sees the same blobs (S3): then
	// one node (the leader) collects; otherwise each node collects its
	// own copies.
	Shared() bool
}

// URLSigner is a BlobStore whose blobs clients can fetch directly (S3):
// storage.redirect_downloads answers 302 to DownloadURL (SPEC.md Files
// rule 5).
type URLSigner interface {
	// DownloadURL is the public URL of key (s3.public_url) or a
	// presigned one valid for ttl.
	DownloadURL(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Blob is an open blob: seekable, so ranges are served without reading
// what precedes them.
type Blob interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// Stores resolves a storage driver name ("local", "s3") to its blob store
// as the current settings configure it. Files remember the driver they
// were stored with, so switching storage.driver loses nothing: old files
// are read from the store that holds them.
type Stores interface {
	Store(ctx context.Context, driver string) (BlobStore, error)
}

// Credentials decides whether the principal behind a file token still
// holds (engine/auth's Recheck): the account or admin exists, nothing
// revoked the token, no password reset or sign-out came after it.
type Credentials interface {
	Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error)
}

// ThumbSource is the image a thumbnail is made from.
type ThumbSource struct {
	Name string // stored name (a cache key)
	MIME string
	Size int64
	// Open opens the source's bytes.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Thumbnailer makes thumbnails of images (SPEC.md Files rule 4).
//
// The composition root wires engine/files/thumb's cache through it
// (cmd/svcd/stack/thumbs.go, Options.Thumbnails). Without one, a download
// with thumb= serves the original.
type Thumbnailer interface {
	// Thumbnail answers the thumbnail of src for thumb (the thumb query
	// parameter) and fit (the fit query parameter, may be empty), with its
	// MIME type; a nil Blob (and nil error) when the original is served:
	// a malformed spec, a source that is no supported image, or one over
	// the size limit.
	Thumbnail(ctx context.Context, src ThumbSource, thumb, fit string) (Blob, string, error)
	// Forget deletes the cached thumbnails of a stored name (its source
	// is gone).
	Forget(name string)
}
