package apitest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersityGW is a running S3 gateway process (github.com/versity/versitygw,
// posix backend): a real S3-compatible server out of process, holding one
// bucket, addressed as a user of svcd would address it.
type VersityGW struct {
	// URL is the gateway's endpoint, for example http://127.0.0.1:41234.
	URL string
	// Bucket exists, created through the S3 API.
	Bucket string
	// AccessKey and SecretKey are the gateway's root credentials; Region
	// is the region it signs and checks signatures for.
	AccessKey, SecretKey, Region string
	// Dir is the posix backend's root: the objects of Bucket are files
	// under Dir/Bucket.
	Dir string
	// Client speaks S3 to the gateway with the root credentials.
	Client *s3.Client
}

// versityGWBin finds the gateway: $VERSITYGW_BIN (the executable or the
// directory holding it), versitygw on PATH, or where .ci/run installs it
// ($HOME/.cache/svcd/bin). It returns "" when there is none.
func versityGWBin() string {
	bin := os.Getenv("VERSITYGW_BIN")
	if fi, err := os.Stat(bin); bin != "" && err == nil && fi.IsDir() {
		bin = filepath.Join(bin, "versitygw")
	}
	if fi, err := os.Stat(bin); bin != "" && err == nil && !fi.IsDir() {
		return bin
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "svcd", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// StartVersityGW runs versitygw with the posix backend in a temporary
// directory on a free loopback port for the test's lifetime, and creates
// bucket through the S3 API. A missing binary skips the test (fails it
// under CI=1, see NeedPeer).
func StartVersityGW(t testing.TB, bucket string) *VersityGW {
	t.Helper()
	bin := versityGWBin()
	if bin == "" {
		NeedPeer(t, "versitygw", "GOBIN=$HOME/.cache/svcd/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0, or set VERSITYGW_BIN")
	}
	g := &VersityGW{Bucket: bucket, AccessKey: "svcd-test-key", SecretKey: "svcd-test-secret-0123456789", Region: "us-east-1", Dir: t.TempDir()}
	port := freePorts(t, 1)[0]
	g.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", "127.0.0.1:"+strconv.Itoa(port), "--region", g.Region, "--quiet", "posix", g.Dir)
	// Credentials through the environment keep them out of the process list.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+g.AccessKey, "ROOT_SECRET_ACCESS_KEY="+g.SecretKey)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("versitygw output:\n%s", out.String())
		}
	})
	g.Client = S3Client(g.URL, g.Region, g.AccessKey, g.SecretKey)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("versitygw exited: %v\n%s", err, out.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", g.URL[len("http://"):], time.Second); err == nil {
			_ = c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err = g.Client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
			cancel()
			if err != nil {
				t.Fatalf("versitygw: create bucket %s: %v\n%s", bucket, err, out.String())
			}
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw not listening after 30 s\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Settings are the s3.* settings that point svcd at the gateway's bucket,
// as an administrator would set them (PATCH /api/v1/admin/settings).
func (g *VersityGW) Settings() map[string]any {
	return map[string]any{
		"s3.endpoint": g.URL, "s3.bucket": g.Bucket, "s3.region": g.Region,
		"s3.access_key_id": g.AccessKey, "s3.secret_access_key": g.SecretKey,
	}
}

// S3Client is an S3 client for a test's S3-compatible server at endpoint
// (path-style addressing, static credentials), for reading what svcd
// wrote through the protocol itself.
func S3Client(endpoint, region, accessKey, secretKey string) *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
	})
}
