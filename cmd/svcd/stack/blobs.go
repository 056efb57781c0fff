package stack

import (
	"context"

	"svcd/cluster/blobs"
	"svcd/engine/files"
)

// fileStores adapts the node's blob stores (cluster/blobs) to the
// interfaces engine/files owns: the two packages do not know each other.
type fileStores struct{ s *blobs.Stores }

func (f fileStores) Store(ctx context.Context, driver string) (files.BlobStore, error) {
	b, err := f.s.Store(ctx, driver)
	if err != nil {
		return nil, err
	}
	return fileBucket{b}, nil
}

// fileBucket is a blobs.Bucket as a files.BlobStore.
type fileBucket struct{ *blobs.Bucket }

func (b fileBucket) Open(ctx context.Context, key string) (files.Blob, error) {
	r, err := b.Bucket.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return r, nil
}
