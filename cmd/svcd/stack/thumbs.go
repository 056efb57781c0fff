package stack

import (
	"context"
	"errors"
	"os"
	"time"

	"svcd/engine/files"
	"svcd/engine/files/thumb"
)

// thumbnails adapts the node's thumbnail cache (engine/files/thumb) to the
// interface engine/files owns. Each node keeps its own cache under its
// data directory; a source's thumbnails are forgotten on every node when
// the source is deleted.
type thumbnails struct{ c *thumb.Cache }

func (t thumbnails) Thumbnail(ctx context.Context, src files.ThumbSource, spec, fit string) (files.Blob, string, error) {
	s, ok := thumb.ParseSpec(spec, fit)
	if !ok {
		return nil, "", nil // a malformed spec serves the original
	}
	th, err := t.c.Open(ctx, src.Name, src.MIME, s, src.Open)
	switch {
	case errors.Is(err, thumb.ErrNotThumbnailable):
		return nil, "", nil
	case err != nil:
		return nil, "", err
	}
	return thumbFile{File: th.File, size: th.Size, mod: th.ModTime}, th.MIME(), nil
}

func (t thumbnails) Forget(name string) { _ = t.c.DeleteSource(name) }

// thumbFile is a cached thumbnail as a files.Blob.
type thumbFile struct {
	*os.File
	size int64
	mod  time.Time
}

func (f thumbFile) Size() int64        { return f.size }
func (f thumbFile) ModTime() time.Time { return f.mod }
