package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Bucket is a blob store over a gocloud.dev/blob bucket: it satisfies
// engine/files.BlobStore.
type Bucket struct {
	b         *blob.Bucket
	shared    bool
	publicURL string
	// abandon, when set, removes what a failed write of a key left in
	// the store beyond gocloud's reach (S3: the multipart upload).
	abandon func(key string) error
}

// errNoURL answers DownloadURL on a store clients cannot reach.
var errNoURL = errors.New("blobs: this store has no URL for clients")

// DownloadURL is where a client fetches key directly: under the public
// URL when one is set, else a presigned URL valid for ttl (S3 only).
func (s *Bucket) DownloadURL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if !s.shared {
		return "", errNoURL
	}
	if s.publicURL != "" {
		return s.publicURL + "/" + url.PathEscape(key), nil
	}
	u, err := s.b.SignedURL(ctx, key, &blob.SignedURLOptions{Expiry: ttl})
	if err != nil {
		return "", fmt.Errorf("blobs: sign %s: %w", key, err)
	}
	return u, nil
}

// Put streams r into key. If r fails or ctx ends, the writer's context is
// cancelled before Close, which abandons the write: nothing is stored
// under key (fileblob removes its temporary file, s3blob stops the
// upload). Such a write to S3 also aborts its multipart upload, if it
// began one: s3blob's own abort runs under the cancelled context and
// never reaches the server, which would keep the parts (invisible,
// billed) for good.
func (s *Bucket) Put(ctx context.Context, key, contentType string, r io.Reader) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType, DisableContentTypeDetection: true})
	if err != nil {
		return fmt.Errorf("blobs: put %s: %w", key, err)
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return s.abandoned(key, err)
	}
	if err := w.Close(); err != nil {
		err = fmt.Errorf("blobs: put %s: %w", key, err)
		if ctx.Err() != nil {
			return s.abandoned(key, err)
		}
		return err
	}
	return nil
}

// abandoned cleans up after a cancelled write of key that failed with
// err; it returns err, with the clean-up's own failure when there is one.
func (s *Bucket) abandoned(key string, err error) error {
	if s.abandon == nil {
		return err
	}
	if aerr := s.abandon(key); aerr != nil {
		return fmt.Errorf("%w (and %w)", err, aerr)
	}
	return err
}

// Open opens key; fs.ErrNotExist when there is none.
func (s *Bucket) Open(ctx context.Context, key string) (*Reader, error) {
	r, err := s.b.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("blobs: %s: %w", key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("blobs: open %s: %w", key, err)
	}
	return &Reader{r}, nil
}

// Delete removes key; a missing key is not an error.
func (s *Bucket) Delete(ctx context.Context, key string) error {
	err := s.b.Delete(ctx, key)
	if err == nil || gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return fmt.Errorf("blobs: delete %s: %w", key, err)
}

// List calls fn for every key (sidecar files of fileblob are not keys).
func (s *Bucket) List(ctx context.Context, fn func(key string, modified time.Time) error) error {
	it := s.b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("blobs: list: %w", err)
		}
		if obj.IsDir {
			continue
		}
		if err := fn(obj.Key, obj.ModTime); err != nil {
			return err
		}
	}
}

// Shared reports whether every node sees this store's blobs.
func (s *Bucket) Shared() bool { return s.shared }

// Close closes the bucket.
func (s *Bucket) Close() error { return s.b.Close() }

// Reader is an open blob: seekable (ranges are read lazily).
type Reader struct{ r *blob.Reader }

func (r *Reader) Read(p []byte) (int, error)                   { return r.r.Read(p) }
func (r *Reader) Seek(offset int64, whence int) (int64, error) { return r.r.Seek(offset, whence) }
func (r *Reader) Close() error                                 { return r.r.Close() }

// Size is the blob's size in bytes.
func (r *Reader) Size() int64 { return r.r.Size() }

// ModTime is when the blob was written.
func (r *Reader) ModTime() time.Time { return r.r.ModTime() }
