package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"svcd/cluster/blobs"
	"svcd/engine/backup"
)

// svcd backup copies a live node's database (a consistent copy, taken
// from a read transaction while writes go on) to a file or an S3 object.
// The bytes come from the node on --dir through its admin socket (no
// token: the socket is the data directory's owner's), or, with --url, from
// GET /api/v1/admin/backup with the owner token in SVC_TOKEN.

// backupOptions are svcd backup's flags.
type backupOptions struct {
	to, dir, url string
	gzip         bool
}

func backupFlagSet(o *backupOptions) *flag.FlagSet {
	fs := dirFlagSet("backup", &o.dir)
	fs.StringVar(&o.to, "to", "", "where the backup goes: a file (- for standard output) or s3://bucket/key")
	fs.StringVar(&o.url, "url", os.Getenv("SVC_URL"), "copy from the node at this URL with the token in SVC_TOKEN, instead of the node on --dir (SVC_URL)")
	fs.BoolVar(&o.gzip, "gzip", false, "compress the backup (gzip)")
	return fs
}

// backupTimeout bounds a whole backup.
const backupTimeout = 6 * time.Hour

// runBackup is svcd backup (its help: cli_commands.go).
func runBackup(args []string) error {
	var o backupOptions
	fs := backupFlagSet(&o)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if o.to == "" {
		return usageErrorf("--to is required: a file, - for standard output, or s3://bucket/key")
	}
	ctx, cancel := context.WithTimeout(context.Background(), backupTimeout)
	defer cancel()
	src, err := openBackupSource(ctx, o)
	if err != nil {
		return err
	}
	defer src.body.Close()
	counted := &countWriter{}
	body := io.TeeReader(src.body, counted)
	if err := writeBackup(ctx, o, src, body); err != nil {
		return err
	}
	what := "bytes"
	if o.gzip {
		what = "bytes (gzip)"
	}
	fmt.Fprintf(os.Stderr, "backup of log entry %s (internal schema version %s, sha256 %s) from %s: %d %s written to %s\n",
		src.header.Get("X-Svc-Backup-Index"), src.header.Get("X-Svc-Schema-Version"), src.header.Get("X-Svc-Backup-Sha256"),
		src.from, counted.n, what, o.to)
	return nil
}

// backupSource is the answer of the node that copies its database.
type backupSource struct {
	body   io.ReadCloser
	header http.Header
	from   string
	s3     func(string) string // the node's s3.* settings
}

// openBackupSource asks the node for a copy (gzip-compressed when asked).
func openBackupSource(ctx context.Context, o backupOptions) (*backupSource, error) {
	q := ""
	if o.gzip {
		q = "?gzip=1"
	}
	if o.url != "" {
		tok := os.Getenv("SVC_TOKEN")
		if tok == "" {
			return nil, usageErrorf("--url needs an owner's token (an admin token or an API token with the admin scope) in SVC_TOKEN")
		}
		base := strings.TrimRight(o.url, "/")
		client := &http.Client{}
		get := func(path string) (*http.Response, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Accept-Encoding", "identity")
			return client.Do(req)
		}
		resp, err := get("/api/v1/admin/backup" + q)
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			defer resp.Body.Close()
			return nil, fmt.Errorf("backup: %s answered %s", base, answerText(resp))
		}
		src := &backupSource{body: resp.Body, header: resp.Header, from: base}
		src.s3 = func(key string) string { return "" }
		if strings.HasPrefix(o.to, "s3://") && !s3FromEnv() {
			settings, err := nodeS3Settings(func() (*http.Response, error) { return get("/api/v1/admin/settings?reveal=1") })
			if err != nil {
				resp.Body.Close()
				return nil, err
			}
			src.s3 = settings
		}
		return src, nil
	}
	dataDir, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, err
	}
	client := socketClient(dataDir, 0)
	resp, err := client.Get("http://svcd/backup" + q)
	if err != nil {
		return nil, fmt.Errorf("backup: no node is running on %s (its admin socket %s does not answer); start it, or copy from a node's URL with --url and SVC_TOKEN",
			dataDir, filepath.Join(dataDir, adminSocketName))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, fmt.Errorf("backup: the node on %s answered %s", dataDir, answerText(resp))
	}
	src := &backupSource{body: resp.Body, header: resp.Header, from: "the node on " + dataDir}
	src.s3 = func(string) string { return "" }
	if strings.HasPrefix(o.to, "s3://") && !s3FromEnv() {
		settings, err := nodeS3Settings(func() (*http.Response, error) { return client.Get("http://svcd/settings/s3") })
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		src.s3 = settings
	}
	return src, nil
}

// writeBackup writes body to o.to.
func writeBackup(ctx context.Context, o backupOptions, src *backupSource, body io.Reader) error {
	switch {
	case o.to == "-":
		_, err := io.Copy(os.Stdout, body)
		return err
	case strings.HasPrefix(o.to, "s3://"):
		bucket, key, _ := strings.Cut(strings.TrimPrefix(o.to, "s3://"), "/")
		if bucket == "" || key == "" || strings.HasSuffix(key, "/") {
			return usageErrorf("an S3 destination is s3://bucket/key, got %q", o.to)
		}
		setting := src.s3
		if s3FromEnv() {
			setting = func(k string) string { return os.Getenv(s3Env[k]) }
		}
		b, err := blobs.OpenTarget(ctx, "s3://"+bucket, blobs.S3ConfigFrom(setting))
		if err != nil {
			return err
		}
		defer b.Close()
		ct := "application/vnd.sqlite3"
		if o.gzip {
			ct = "application/gzip"
		}
		if err := b.Put(ctx, key, ct, body); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		return nil
	}
	path, err := filepath.Abs(o.to)
	if err != nil {
		return err
	}
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = io.Copy(f, body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(part, path)
	}
	if err != nil {
		os.Remove(part)
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// s3Env maps the s3.* settings to the variables that override them.
var s3Env = map[string]string{
	"s3.endpoint":          "SVC_S3_ENDPOINT",
	"s3.region":            "SVC_S3_REGION",
	"s3.access_key_id":     "SVC_S3_ACCESS_KEY_ID",
	"s3.secret_access_key": "SVC_S3_SECRET_ACCESS_KEY",
}

// s3FromEnv reports whether the S3 connection comes from the SVC_S3_*
// variables rather than the node's settings.
func s3FromEnv() bool {
	for _, v := range s3Env {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// nodeS3Settings reads the node's s3.* settings (secrets revealed).
func nodeS3Settings(get func() (*http.Response, error)) (func(string) string, error) {
	resp, err := get()
	if err != nil {
		return nil, fmt.Errorf("backup: read the node's s3.* settings: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("backup: read the node's s3.* settings: %s", answerText(resp))
	}
	var body struct {
		Data map[string]string `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("backup: read the node's s3.* settings: %w", err)
	}
	return func(k string) string { return body.Data[k] }, nil
}

// answerText is an error answer, for the terminal.
func answerText(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var env struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &env) == nil && env.Error != "" {
		return resp.Status + ": " + env.Error
	}
	return resp.Status + ": " + strings.TrimSpace(string(b))
}

// socketClient speaks HTTP to the admin socket in dataDir.
func socketClient(dataDir string, timeout time.Duration) *http.Client {
	sock := filepath.Join(dataDir, adminSocketName)
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
}

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// serveSocketBackup answers GET /backup on the admin socket: a copy of the
// node's database (gzip-compressed with ?gzip=1), with the headers of GET
// /api/v1/admin/backup.
func serveSocketBackup(take func() (*backup.Copy, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := take()
		if err != nil {
			http.Error(w, describe(err), http.StatusServiceUnavailable)
			return
		}
		defer c.Remove()
		f, err := c.Open()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		h := w.Header()
		h.Set("X-Svc-Backup-Index", strconv.FormatUint(c.Index, 10))
		h.Set("X-Svc-Schema-Version", strconv.FormatInt(c.SchemaVersion, 10))
		h.Set("X-Svc-Backup-Sha256", c.SHA256)
		h.Set("Content-Type", "application/vnd.sqlite3")
		var out io.Writer = w
		var zw *gzip.Writer
		if r.URL.Query().Get("gzip") == "1" {
			h.Set("Content-Type", "application/gzip")
			zw = gzip.NewWriter(w)
			out = zw
		}
		w.WriteHeader(http.StatusOK)
		if _, err := io.Copy(out, f); err != nil {
			return
		}
		if zw != nil {
			zw.Close()
		}
	}
}

// serveSocketS3 answers GET /settings/s3 on the admin socket: the node's
// s3.* settings, secrets included (the socket's user owns them anyway),
// for svcd backup --to s3://...
func serveSocketS3(setting func(string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out := map[string]string{}
		for k := range s3Env {
			out[k] = setting(k)
		}
		json.NewEncoder(w).Encode(map[string]any{"data": out})
	}
}
