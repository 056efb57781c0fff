package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The file scenarios measure SPEC.md's Files section over HTTP, on a
// collection of their own (--files-collection, default bench_files: a
// title and a single file field "file" with no maxSize, every rule open),
// with files of --file-size random bytes (incompressible; the server
// sniffs them as application/octet-stream):
//
//	upload      POST /api/v1/files/:collection/:id/file, the files endpoint
//	            (SPEC.md's upload route), multipart form field "file", as
//	            the admin (uploads need a signed-in caller). Each client
//	            owns a record created beforehand and replaces its file with
//	            every request; one prebuilt body is shared by all clients.
//	download    GET /api/v1/files/:filename of one of downloadFiles files
//	            uploaded beforehand (random choice), anonymous, the whole
//	            body read.
//	upload-big  one upload of --file-size (default 1GB) to the first node,
//	            streamed from a generator (never held in memory), while the
//	            server's VmRSS is sampled every rssEvery (files_big.go).
//
// upload and download report MB/s (10^6 bytes of file content per second,
// multipart framing not counted) beside the usual figures. A file scenario
// raises files.max_upload_bytes to --file-size when it is lower (the
// admin must be an owner) and puts the old value back when it ends.

// File scenario names.
const (
	scUpload    = "upload"
	scDownload  = "download"
	scUploadBig = "upload-big"
)

// Defaults of --file-size.
const (
	defaultFileSize    = 1_000_000     // upload, download: 1MB
	defaultBigFileSize = 1_000_000_000 // upload-big: 1GB
)

// downloadFiles is how many files the download scenario uploads first.
const downloadFiles = 8

// fileField is the file field of the files collection.
const fileField = "file"

// settingMaxUpload is CONTRACT.md's upload limit setting.
const settingMaxUpload = "files.max_upload_bytes"

// isFileScenario reports whether a scenario is one of the file ones.
func isFileScenario(name string) bool {
	return name == scUpload || name == scDownload || name == scUploadBig
}

// fileSizeFor is the file size a scenario uses: --file-size, else its
// default.
func fileSizeFor(cfg config, name string) int64 {
	switch {
	case cfg.fileSize > 0:
		return cfg.fileSize
	case name == scUploadBig:
		return defaultBigFileSize
	}
	return defaultFileSize
}

// runFileScenario readies the files collection and the upload limit for
// a file scenario (dropping the collection first when fresh), runs it and
// puts the limit back.
func runFileScenario(ctx context.Context, env scenarioEnv, cfg config, name string, fresh bool, log io.Writer) (Result, error) {
	size := fileSizeFor(cfg, name)
	if err := env.api.ensureFilesCollection(ctx, env.filesColl, fresh, size); err != nil {
		return Result{}, err
	}
	restore, err := env.api.raiseUploadLimit(ctx, size, log)
	if err != nil {
		return Result{}, err
	}
	defer restore()
	if name == scUploadBig {
		return runUploadBig(ctx, env, cfg, log)
	}
	ld, err := newFileLoad(ctx, name, env, size)
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(log, "%s: %d clients on %s, files of %s, warmup %s, measuring %s\n",
		name, env.clients, env.nodes.describe(), formatSize(size), cfg.warmup, cfg.duration)
	r := runScenario(ctx, env, name, ld, cfg.warmup, cfg.duration)
	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("interrupted: %w", err)
	}
	return r, nil
}

// filesPath is /api/v1/files/:collection/:id/file, the upload route.
func filesPath(coll, id string) string {
	return "/api/v1/files/" + url.PathEscape(coll) + "/" + url.PathEscape(id) + "/" + fileField
}

// uploadRequest builds one upload of a prebuilt multipart body.
func uploadRequest(ctx context.Context, base, coll, id, token string, mb multipartBody) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+filesPath(coll, id), mb.reader())
	if err != nil {
		return nil, err
	}
	req.ContentLength = mb.size()
	req.Header.Set("Content-Type", mb.contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// downloadRequest builds GET /api/v1/files/:filename.
func downloadRequest(ctx context.Context, base, name string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/files/"+url.PathEscape(name), nil)
}

// newFileLoad prepares the upload or download scenario: the records (and
// for download the files) it works on, visible on every node.
func newFileLoad(ctx context.Context, name string, env scenarioEnv, size int64) (load, error) {
	nodes, coll, token := env.nodes, env.filesColl, env.api.token
	switch name {
	case scUpload:
		ids, index, err := createFileRecords(ctx, env.api, coll, env.clients)
		if err != nil {
			return load{}, err
		}
		if err := waitApplied(ctx, env.api, nodes.bases, coll, index); err != nil {
			return load{}, err
		}
		body := newMultipartBody(size, 1)
		next := func(ctx context.Context, w *worker) (*http.Request, error) {
			return uploadRequest(ctx, nodes.bases[nodes.pick(w)], coll, ids[w.id], token, body)
		}
		return load{next: next, bytes: size}, nil
	case scDownload:
		names, index, err := uploadFiles(ctx, env.api, coll, downloadFiles, size)
		if err != nil {
			return load{}, err
		}
		if err := waitApplied(ctx, env.api, nodes.bases, coll, index); err != nil {
			return load{}, err
		}
		fmt.Fprintf(env.log, "%s: %d files of %s uploaded\n", name, len(names), formatSize(size))
		next := func(ctx context.Context, w *worker) (*http.Request, error) {
			return downloadRequest(ctx, nodes.bases[nodes.pick(w)], names[w.rng.IntN(len(names))])
		}
		return load{next: next, bytes: size}, nil
	}
	return load{}, fmt.Errorf("%s is not a file load", name)
}

// createFileRecords creates n records in the files collection through the
// first node and returns their ids and the log index of the last one.
func createFileRecords(ctx context.Context, api *apiClient, coll string, n int) ([]string, uint64, error) {
	ids := make([]string, n)
	var last uint64
	for k := range ids {
		var out struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		body := map[string]string{"title": "bench file " + strconv.Itoa(k)}
		h, err := api.send(ctx, api.base, http.MethodPost, collPath(coll), body, &out)
		if err != nil {
			return nil, 0, fmt.Errorf("creating record %d of %s: %w", k, coll, err)
		}
		ids[k] = out.Data.ID
		last = max(last, svcIndex(h))
	}
	return ids, last, nil
}

// uploadFiles creates n records and streams one file of size bytes to
// each (distinct contents) through the first node; it returns the stored
// file names and the log index of the last upload.
func uploadFiles(ctx context.Context, api *apiClient, coll string, n int, size int64) ([]string, uint64, error) {
	ids, last, err := createFileRecords(ctx, api, coll, n)
	if err != nil {
		return nil, 0, err
	}
	names := make([]string, n)
	for k, id := range ids {
		up, h, err := api.uploadStream(ctx, api.base, coll, id, size, uint64(k)+100)
		if err != nil {
			return nil, 0, fmt.Errorf("uploading file %d: %w", k, err)
		}
		names[k] = up.Filename
		last = max(last, svcIndex(h))
	}
	return names, last, nil
}

// uploadedFile is SPEC.md's file object, as an upload answers it.
type uploadedFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	MIME     string `json:"mimeType"`
}

// uploadStream uploads size generated bytes (seed picks them) to the
// record id as the admin, streaming the body, and returns the answer's
// file object and headers. It has no timeout but ctx's.
func (c *apiClient) uploadStream(ctx context.Context, base, coll, id string, size int64, seed uint64) (*uploadedFile, http.Header, error) {
	mb := newStreamBody(size, seed)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+filesPath(coll, id), mb.reader())
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = mb.size()
	req.Header.Set("Content-Type", mb.contentType)
	req.Header.Set("Authorization", "Bearer "+c.token)
	hc := &http.Client{Transport: c.hc.Transport} // no Timeout: a 1GB body may take minutes
	var out struct {
		Data uploadedFile `json:"data"`
	}
	h, err := c.do(hc, req, &out)
	if err != nil {
		return nil, h, err
	}
	if out.Data.Size != size {
		return nil, h, fmt.Errorf("upload stored %d bytes, sent %d", out.Data.Size, size)
	}
	return &out.Data, h, nil
}

// send is callAt (JSON in and out, as the admin) that also returns the
// answer's headers.
func (c *apiClient) send(ctx context.Context, base, method, path string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return c.do(c.hc, req, out)
}

// do sends req with hc; a non-2xx answer is an *apiError, a 2xx body is
// decoded into out (when not nil).
func (c *apiClient) do(hc *http.Client, req *http.Request, out any) (http.Header, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.Header, fmt.Errorf("%s %s: reading body: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.Header, &apiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.Header, fmt.Errorf("%s %s: decoding body: %w", req.Method, req.URL.Path, err)
		}
	}
	return resp.Header, nil
}

// svcIndex is a write's X-Svc-Index (0 when absent).
func svcIndex(h http.Header) uint64 {
	n, _ := strconv.ParseUint(h.Get("X-Svc-Index"), 10, 64)
	return n
}

// waitApplied waits until every node has applied the log index (a GET
// with X-Svc-Min-Index, which waits up to 5 s and then answers 503), so
// the clients find the records prepared through the first node on all.
func waitApplied(ctx context.Context, api *apiClient, bases []string, coll string, index uint64) error {
	if len(bases) < 2 || index == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, base := range bases {
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+collPath(coll)+"?perPage=1&skipTotal=1", nil)
			if err != nil {
				return err
			}
			req.Header.Set("X-Svc-Min-Index", strconv.FormatUint(index, 10))
			_, err = api.do(api.hc, req, nil)
			if err == nil {
				break
			}
			if statusOf(err) != http.StatusServiceUnavailable || ctx.Err() != nil {
				return fmt.Errorf("waiting for %s to apply index %d: %w", base, index, err)
			}
		}
	}
	return nil
}

// ensureFilesCollection creates the files collection (dropping it first
// when fresh). An existing one is reused when its field "file" is a file
// field; a maxSize under size is lifted (set to 0: no limit but
// files.max_upload_bytes).
func (c *apiClient) ensureFilesCollection(ctx context.Context, name string, fresh bool, size int64) error {
	path := "/api/v1/admin/collections/" + url.PathEscape(name)
	if fresh {
		if _, err := c.send(ctx, c.base, http.MethodDelete, path, nil, nil); err != nil && statusOf(err) != http.StatusNotFound {
			return fmt.Errorf("dropping collection %s: %w", name, err)
		}
	}
	empty := ""
	def := map[string]any{
		"name": name,
		"type": "base",
		"fields": []map[string]any{
			{"name": "title", "type": "text"},
			{"name": fileField, "type": "file"},
		},
		"view_rule": empty, "create_rule": empty, "update_rule": empty, "delete_rule": empty,
	}
	createErr := c.call(ctx, http.MethodPost, "/api/v1/admin/collections", def, true, nil)
	if createErr == nil {
		return nil
	}
	var got struct {
		Data struct {
			Fields []map[string]any `json:"fields"`
		} `json:"data"`
	}
	if _, err := c.send(ctx, c.base, http.MethodGet, path, nil, &got); err != nil {
		return fmt.Errorf("creating collection %s: %v (and reading it: %w)", name, createErr, err)
	}
	fields := got.Data.Fields
	for _, f := range fields {
		if f["name"] != fileField {
			continue
		}
		if f["type"] != "file" {
			break
		}
		if m, _ := f["maxSize"].(float64); m <= 0 || int64(m) >= size {
			return nil
		}
		f["maxSize"] = 0
		if _, err := c.send(ctx, c.base, http.MethodPatch, path, map[string]any{"fields": fields}, nil); err != nil {
			return fmt.Errorf("lifting the maxSize of %s.%s: %w", name, fileField, err)
		}
		return nil
	}
	return fmt.Errorf("collection %s exists without a file field %q: pass --fresh or another --files-collection", name, fileField)
}

// raiseUploadLimit makes files.max_upload_bytes at least size and returns
// what puts the old value back (a no-op when nothing changed).
func (c *apiClient) raiseUploadLimit(ctx context.Context, size int64, log io.Writer) (restore func(), err error) {
	var got struct {
		Data map[string]string `json:"data"`
	}
	if _, err := c.send(ctx, c.base, http.MethodGet, "/api/v1/admin/settings", nil, &got); err != nil {
		return nil, fmt.Errorf("reading %s: %w", settingMaxUpload, err)
	}
	old := got.Data[settingMaxUpload]
	if n, err := strconv.ParseInt(old, 10, 64); err == nil && n >= size {
		return func() {}, nil
	}
	set := func(ctx context.Context, v string) error {
		_, err := c.send(ctx, c.base, http.MethodPatch, "/api/v1/admin/settings", map[string]string{settingMaxUpload: v}, nil)
		return err
	}
	if err := set(ctx, strconv.FormatInt(size, 10)); err != nil {
		return nil, fmt.Errorf("raising %s to %d: %w", settingMaxUpload, size, err)
	}
	fmt.Fprintf(log, "%s raised from %s to %d for the run\n", settingMaxUpload, old, size)
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := set(ctx, old); err != nil {
			fmt.Fprintf(log, "note: could not put %s back to %s: %v\n", settingMaxUpload, old, err)
		}
	}, nil
}

// errNoFileSize answers a --file-size that does not parse.
var errNoFileSize = errors.New("--file-size: want a size such as 10KB, 1MB, 50MB, 1GB, 512KiB or 1048576")
