package blobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob/s3blob"
)

// S3Config is the S3 store's settings (SPEC.md's s3.*).
type S3Config struct {
	Endpoint, Bucket, Region, AccessKeyID, SecretAccessKey string
	// PublicURL is where the bucket's objects are public (a CDN), for
	// redirected downloads.
	PublicURL string
}

// s3ConfigFrom reads the s3.* settings.
func s3ConfigFrom(setting func(string) string) S3Config {
	get := func(k string) string { return strings.TrimSpace(setting(k)) }
	return S3Config{
		Endpoint: strings.TrimRight(get("s3.endpoint"), "/"), Bucket: get("s3.bucket"), Region: get("s3.region"),
		AccessKeyID: get("s3.access_key_id"), SecretAccessKey: get("s3.secret_access_key"),
		PublicURL: strings.TrimRight(get("s3.public_url"), "/"),
	}
}

// errNoBucket answers the S3 driver without s3.bucket.
var errNoBucket = errors.New("blobs: s3.bucket is not set")

// openS3 opens the bucket of cfg. A custom endpoint (MinIO, R2, a test
// server) is addressed path-style; checksums are sent only where the
// protocol requires them, which S3-compatible servers accept.
func openS3(ctx context.Context, cfg S3Config) (*Bucket, error) {
	if cfg.Bucket == "" {
		return nil, errNoBucket
	}
	region := cfg.Region
	if region == "" {
		region = "auto"
	}
	opts := s3.Options{
		Region:                     region,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		opts.Credentials = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")
	} else {
		opts.Credentials = aws.AnonymousCredentials{}
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
		opts.UsePathStyle = true
	}
	client := s3.New(opts)
	b, err := s3blob.OpenBucket(ctx, client, cfg.Bucket, &s3blob.Options{RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired})
	if err != nil {
		return nil, fmt.Errorf("blobs: s3: %w", err)
	}
	a := uploadAborter{client: client, bucket: cfg.Bucket}
	return &Bucket{b: b, shared: true, publicURL: cfg.PublicURL, abandon: a.abort}, nil
}

// abortTimeout bounds the clean-up of a failed write: it runs after the
// request's context may have ended.
const abortTimeout = 30 * time.Second

// uploadAborter aborts the multipart uploads of a key.
type uploadAborter struct {
	client *s3.Client
	bucket string
}

// abort aborts every multipart upload in progress for key, under a
// context of its own. Store names are new UUIDs, so any upload of key is
// the failed write's.
func (a uploadAborter) abort(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), abortTimeout)
	defer cancel()
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(a.bucket), Prefix: aws.String(key)}
	for {
		out, err := a.client.ListMultipartUploads(ctx, in)
		if err != nil {
			var nsu *types.NoSuchUpload
			if errors.As(err, &nsu) {
				return nil // how some servers (gofakes3) say "none"
			}
			return fmt.Errorf("blobs: list the uploads of %s: %w", key, err)
		}
		for _, u := range out.Uploads {
			if aws.ToString(u.Key) != key {
				continue
			}
			_, err := a.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(a.bucket), Key: u.Key, UploadId: u.UploadId})
			if err != nil {
				var nsu *types.NoSuchUpload
				if !errors.As(err, &nsu) {
					return fmt.Errorf("blobs: abort the upload of %s: %w", key, err)
				}
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
