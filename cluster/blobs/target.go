package blobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// OpenTarget opens a destination of backups: an absolute directory on
// this machine (created when missing), or s3://bucket/prefix on the S3
// server cfg describes (its endpoint, region and credentials; cfg.Bucket
// is replaced by the URL's). Keys are relative to the directory or the
// prefix.
func OpenTarget(ctx context.Context, to string, cfg S3Config) (*Bucket, error) {
	if rest, ok := strings.CutPrefix(to, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, fmt.Errorf("blobs: %s names no bucket", to)
		}
		cfg.Bucket, cfg.PublicURL = bucket, ""
		b, err := openS3(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if prefix = strings.Trim(prefix, "/"); prefix != "" {
			b.b = blob.PrefixedBucket(b.b, prefix+"/")
			if abandon := b.abandon; abandon != nil {
				b.abandon = func(key string) error { return abandon(prefix + "/" + key) }
			}
		}
		return b, nil
	}
	if strings.Contains(to, "://") || !filepath.IsAbs(to) {
		return nil, fmt.Errorf("blobs: %q is neither an absolute directory nor s3://bucket/prefix", to)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return nil, fmt.Errorf("blobs: %w", err)
	}
	b, err := fileblob.OpenBucket(to, &fileblob.Options{NoTempDir: true, DirFileMode: 0o700, Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		return nil, fmt.Errorf("blobs: %s: %w", to, err)
	}
	return &Bucket{b: b}, nil
}

// S3ConfigFrom reads the s3.* settings through setting (the node's
// replicated settings, or the command line's environment).
func S3ConfigFrom(setting func(string) string) S3Config { return s3ConfigFrom(setting) }
