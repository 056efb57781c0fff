package blobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"gocloud.dev/blob/fileblob"
)

// Stores resolves the storage drivers "local" and "s3" to their stores.
// The local store lives in a directory of the node's data directory; the
// S3 store is built from the s3.* settings when first needed and rebuilt
// when they change.
type Stores struct {
	dir     string
	setting func(key string) string

	mu    sync.Mutex
	local *Bucket
	s3    *Bucket
	s3cfg S3Config
}

// New returns the stores of a node whose local blobs live in dir (created
// when missing); setting reads the replicated settings.
func New(dir string, setting func(key string) string) *Stores {
	return &Stores{dir: dir, setting: setting}
}

// ErrUnknownDriver names a storage.driver this build does not know.
var ErrUnknownDriver = errors.New("blobs: unknown storage driver")

// Store returns driver's store as the settings configure it now.
func (s *Stores) Store(ctx context.Context, driver string) (*Bucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch driver {
	case "local":
		if s.local == nil {
			if err := os.MkdirAll(s.dir, 0o700); err != nil {
				return nil, fmt.Errorf("blobs: local store: %w", err)
			}
			b, err := fileblob.OpenBucket(s.dir, &fileblob.Options{NoTempDir: true, DirFileMode: 0o700, Metadata: fileblob.MetadataDontWrite})
			if err != nil {
				return nil, fmt.Errorf("blobs: local store: %w", err)
			}
			s.local = &Bucket{b: b}
		}
		return s.local, nil
	case "s3":
		cfg := s3ConfigFrom(s.setting)
		if s.s3 != nil && cfg == s.s3cfg {
			return s.s3, nil
		}
		b, err := openS3(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if s.s3 != nil {
			s.s3.Close()
		}
		s.s3, s.s3cfg = b, cfg
		return s.s3, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownDriver, driver)
}

// Close closes the open stores.
func (s *Stores) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, b := range []*Bucket{s.local, s.s3} {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	s.local, s.s3 = nil, nil
	return errors.Join(errs...)
}
