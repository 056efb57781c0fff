package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"svcd/api/apitest"
)

// TestBackupS3: backups written to s3://bucket/prefix through the s3.*
// settings, on gofakes3 and on the versitygw gateway: POST /admin/backups
// writes one now (gzip when backup.gzip is on), the retention keeps the
// backup.keep newest under the prefix, GET /admin/backups lists the runs,
// backup.schedule runs them on the leader, and each object is a database
// that passes integrity_check. With wrong credentials (versitygw checks
// them) the run fails, 503, and is recorded as failed.
func TestBackupS3(t *testing.T) {
	t.Parallel()
	eachS3(t, func(t *testing.T, peer *s3Peer) {
		s := apitest.Start(t, apitest.Options{})
		s.AdminToken(t)
		s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
		settings := map[string]any{"backup.to": "s3://" + peer.bucket + "/nightly", "backup.keep": "2", "backup.gzip": true}
		for k, v := range peer.settings {
			settings[k] = v
		}
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, settings)
		for i := range 3 {
			s.CreateRecord(t, "posts", map[string]any{"title": fmt.Sprint("post ", i)})
			run := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, "POST", backupsURL, nil)["data"])
			if run["ok"] != true || run["trigger"] != "manual" || !strings.HasSuffix(run["key"].(string), ".db.gz") {
				t.Fatalf("run %d: %v", i, run)
			}
		}
		keys := peer.backupKeys(t, "nightly/")
		if len(keys) != 2 {
			t.Fatalf("the prefix holds %v, want the 2 newest", keys)
		}
		runs := apitest.List(t, s.MustAdmin(t, http.StatusOK, "GET", backupsURL, nil)["data"])
		newest := apitest.Obj(t, runs[0])
		if len(runs) != 3 || "nightly/"+newest["key"].(string) != keys[1] || apitest.Int(t, newest["pruned"]) != 1 {
			t.Fatalf("runs %v, keys %v", runs, keys)
		}
		// The newest object is the database with the three posts.
		b := backupFile{data: gunzip(t, peer.object(t, keys[1])), index: uint64(apitest.Int(t, newest["index"]))}
		var n int
		if err := b.open(t).QueryRow(`SELECT count(*) FROM posts`).Scan(&n); err != nil || n != 3 {
			t.Fatalf("the newest backup holds %d posts (%v)", n, err)
		}

		// The schedule, every second: runs recorded by the leader, the
		// retention still at two.
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"backup.schedule": "@every 1s", "backup.gzip": false})
		deadline := time.Now().Add(30 * time.Second)
		for scheduledRuns(t, s) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("no two scheduled runs within 30 s: %v", s.MustAdmin(t, http.StatusOK, "GET", backupsURL, nil))
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"backup.schedule": nil})
		time.Sleep(200 * time.Millisecond) // a run under way ends
		keys = peer.backupKeys(t, "nightly/")
		if len(keys) != 2 || !strings.HasSuffix(keys[1], ".db") {
			t.Fatalf("after the scheduled runs the prefix holds %v", keys)
		}
		backupFile{data: peer.object(t, keys[1]), index: indexOfKey(t, keys[1])}.open(t)

		if peer.checksSignatures {
			s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"s3.secret_access_key": "wrong-secret-0123456789"})
			res, body := s.AdminDo(t, "POST", backupsURL, nil)
			if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "could not be written") {
				t.Fatalf("wrong credentials: %d %s", res.StatusCode, body)
			}
			last := apitest.Obj(t, apitest.List(t, s.MustAdmin(t, http.StatusOK, "GET", backupsURL, nil)["data"])[0])
			if last["ok"] != false || last["error"] == "" {
				t.Fatalf("the failed run: %v", last)
			}
		}
	})
}

// TestBackupToDirectory: backup.to may be a directory of the node's
// machine; the settings refuse what is neither an absolute directory nor
// an S3 URL, and a schedule that does not parse.
func TestBackupToDirectory(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	dir := filepath.Join(t.TempDir(), "backups")
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "no destination", Method: "POST", URL: backupsURL, Admin: true, ExpectedStatus: 422, AfterFunc: apitest.Details("backup.to")},
		{Name: "a relative directory", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"backup.to": "backups"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("backup.to")},
		{Name: "another scheme", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"backup.to": "gs://bucket/x"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("backup.to")},
		{Name: "a bad schedule", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"backup.schedule": "nightly"},
			ExpectedStatus: 422, AfterFunc: apitest.Details("backup.schedule")},
		{Name: "a negative keep", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"backup.keep": -1},
			ExpectedStatus: 422, AfterFunc: apitest.Details("backup.keep")},
		{Name: "a directory", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"backup.to": dir, "backup.keep": 1},
			ExpectedStatus: 200},
		{Name: "a backup", Method: "POST", URL: backupsURL, Admin: true, ExpectedStatus: 201, ExpectedContent: []string{`"ok":true`}},
		{Name: "another", Method: "POST", URL: backupsURL, Admin: true, ExpectedStatus: 201, ExpectedContent: []string{`"pruned":1`}},
	})
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the directory holds %v (%v), want one backup", entries, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	backupFile{data: data, index: indexOfKey(t, entries[0].Name())}.open(t)
}

// scheduledRuns counts the runs the schedule started.
func scheduledRuns(t testing.TB, s *apitest.Server) int {
	n := 0
	for _, r := range apitest.List(t, s.MustAdmin(t, http.StatusOK, "GET", backupsURL, nil)["data"]) {
		if apitest.Obj(t, r)["trigger"] == "schedule" {
			n++
		}
	}
	return n
}

// indexOfKey reads the index out of a backup's name (...-i<index>.db).
func indexOfKey(t testing.TB, key string) uint64 {
	t.Helper()
	var idx uint64
	i := strings.LastIndex(key, "-i")
	if _, err := fmt.Sscanf(key[i+2:], "%d", &idx); err != nil {
		t.Fatalf("no index in %s", key)
	}
	return idx
}

// backupKeys lists the bucket's keys under prefix, oldest backup first.
func (p *s3Peer) backupKeys(t testing.TB, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(p.bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := strings.Compare(a[:strings.LastIndex(a, "-i")], b[:strings.LastIndex(b, "-i")]); c != 0 {
			return c
		}
		return int(indexOfKey(t, a)) - int(indexOfKey(t, b))
	})
	return keys
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
