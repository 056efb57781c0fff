package jepsen_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Files in a cluster with the local driver: an acknowledged upload is on
// a majority of the voters, and a node that lacks a blob gets it from a
// peer (docs/files.md "In a cluster").

const filesCollection = `{"name":"papers","type":"base","view_rule":"","create_rule":"",
  "fields":[{"name":"title","type":"text"},{"name":"att","type":"file","multiple":true}]}`

// newFilesRecord creates the collection and one record to upload to.
func newFilesRecord(t *testing.T, c *harness.Cluster) string {
	t.Helper()
	createCollectionAll(t, c, filesCollection)
	leader := c.MustLeader(t, leaderTimeout)
	resp := mustDo(t, c.Admin(leader), "POST", "/api/v1/papers", map[string]any{"title": "t"}, http.StatusCreated)
	rec, err := decodeRecord(resp)
	if err != nil {
		t.Fatal(err)
	}
	waitIndexAll(t, c, resp.Index())
	return rec.ID
}

// upload sends body as a file of record id through nd; it answers the
// stored name and the index of the write.
func upload(t *testing.T, c *harness.Cluster, nd *harness.Node, id string, body []byte) (string, uint64) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "blob.bin")
	fw.Write(body)
	mw.Close()
	req, _ := http.NewRequest("POST", nd.URL()+"/api/v1/files/papers/"+id+"/att", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+c.Token)
	cl := &http.Client{Timeout: time.Minute}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("upload through %s: %v", nd.Name, err)
	}
	defer resp.Body.Close()
	// A multiple field answers its uploaded files (one here).
	var out struct {
		Data []struct{ Filename string } `json:"data"`
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload through %s: %d", nd.Name, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Data) != 1 || out.Data[0].Filename == "" {
		t.Fatalf("upload answer: %v %+v", err, out)
	}
	idx, _ := strconv.ParseUint(resp.Header.Get("X-Svc-Index"), 10, 64)
	return out.Data[0].Filename, idx
}

// download fetches name from nd once nd has applied idx.
func download(t *testing.T, c *harness.Cluster, nd *harness.Node, name string, idx uint64) []byte {
	t.Helper()
	cl := c.Client(nd).MinIndex(idx)
	cl.Timeout = time.Minute
	resp, err := cl.Do(context.Background(), "GET", "/api/v1/files/"+name, nil)
	if err != nil {
		t.Fatalf("download %s from %s: %v", name, nd.Name, err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("download %s from %s: %s", name, nd.Name, resp)
	}
	return resp.Body
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilesUploadSurvivesKillOfReceiver: a file uploaded through a
// follower that is SIGKILLed right after its 201 downloads with identical
// bytes from both other nodes (at most one of which received the push:
// the other fetches it from its peer on the request).
func TestFilesUploadSurvivesKillOfReceiver(t *testing.T) {
	c := startCluster(t, 3)
	id := newFilesRecord(t, c)
	follower := c.Followers()[0]
	body := randomBytes(t, 3<<20)
	name, idx := upload(t, c, follower, id, body)
	c.Kill(t, follower.Name)
	want := sha256.Sum256(body)
	for _, nd := range c.Running() {
		got := download(t, c, nd, name, idx)
		if sha256.Sum256(got) != want {
			t.Errorf("%s serves %d bytes that differ from the upload", nd.Name, len(got))
		}
	}
}

// TestFilesNodeDownGetsBlobsAfterwards: a node that was down while files
// were uploaded gets them once back through its background copy, without
// any request; a blob it loses later is fetched by the download that
// needs it.
func TestFilesNodeDownGetsBlobsAfterwards(t *testing.T) {
	c := startCluster(t, 3)
	id := newFilesRecord(t, c)
	leader := c.MustLeader(t, leaderTimeout)
	var down *harness.Node
	for _, nd := range c.Followers() {
		down = nd
	}
	c.Kill(t, down.Name)
	bodies := map[string][]byte{}
	var last uint64
	for i := range 5 {
		body := randomBytes(t, 200<<10+i)
		name, idx := upload(t, c, leader, id, body)
		bodies[name], last = body, idx
	}
	c.Restart(t, down.Name)
	// The background copy: every blob on the node's disk, no request made.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var missing []string
		for name, body := range bodies {
			got, err := os.ReadFile(filepath.Join(down.DataDir(), "storage", name))
			if err != nil || !bytes.Equal(got, body) {
				missing = append(missing, fmt.Sprintf("%s (%v)", name, err))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still lacks %v", down.Name, missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// A blob lost from the node's store (a restored copy of an older
	// storage directory) is fetched from a peer by the next download.
	var first string
	for name := range bodies {
		first = name
		break
	}
	if err := os.Remove(filepath.Join(down.DataDir(), "storage", first)); err != nil {
		t.Fatal(err)
	}
	if got := download(t, c, down, first, last); !bytes.Equal(got, bodies[first]) {
		t.Fatalf("%s serves %d bytes for %s, not the upload", down.Name, len(got), first)
	}
}

// TestFilesUploadWithoutMajorityIs503: with both other voters down, an
// upload cannot reach a majority: 503, and the receiving node keeps no
// copy of the bytes.
func TestFilesUploadWithoutMajorityIs503(t *testing.T) {
	c := startCluster(t, 3)
	id := newFilesRecord(t, c)
	leader := c.MustLeader(t, leaderTimeout)
	for _, nd := range c.Followers() {
		c.Kill(t, nd.Name)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "blob.bin")
	fw.Write(randomBytes(t, 100<<10))
	mw.Close()
	req, _ := http.NewRequest("POST", leader.URL()+"/api/v1/files/papers/"+id+"/att", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("upload without a majority: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	entries, err := os.ReadDir(filepath.Join(leader.DataDir(), "storage"))
	if err != nil {
		t.Fatalf("the store the upload went through: %v", err)
	}
	for _, e := range entries {
		t.Errorf("the refused upload left %s", e.Name())
	}
}
