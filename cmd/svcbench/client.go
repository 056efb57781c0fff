package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// newHTTPClient returns the single client shared by every benchmark worker:
// one host, many long-lived keep-alive connections, no compression.
func newHTTPClient(clients int, timeout time.Duration) *http.Client {
	idle := 2*clients + 16
	tr := &http.Transport{
		Proxy: nil, // talk to the server directly, never through $HTTP_PROXY
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// apiError is a non-2xx answer from the server.
type apiError struct {
	Method string
	Path   string
	Status int
	Msg    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Msg)
}

// statusOf returns the HTTP status carried by err, or 0.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// apiClient performs the control-plane calls (auth, schema, seeding,
// metrics) and builds the requests issued by the workers.
type apiClient struct {
	base     string // e.g. http://127.0.0.1:8090, no trailing slash
	hc       *http.Client
	setupKey string
	token    string // admin token once authenticated
}

func newAPIClient(base string, hc *http.Client, setupKey string) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), hc: hc, setupKey: setupKey}
}

// call sends a JSON request and, on a 2xx answer, decodes the whole body
// into out (when non-nil). Non-2xx answers become *apiError.
func (c *apiClient) call(ctx context.Context, method, path string, body any, admin bool, out any) error {
	return c.callAt(ctx, c.base, method, path, body, admin, out)
}

// callAt is call against the node at base.
func (c *apiClient) callAt(ctx context.Context, base, method, path string, body any, admin bool, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if admin && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.setupKey != "" && strings.HasPrefix(path, "/api/v1/admin/setup") {
		req.Header.Set("X-Setup-Key", c.setupKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{Method: method, Path: path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decoding body: %w", method, path, err)
		}
	}
	return nil
}

// errorMessage extracts "error" from an error envelope, falling back to the
// (truncated) raw body.
func errorMessage(raw []byte) string {
	var env struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Error != "" {
		return env.Error
	}
	return truncate(string(raw), 300)
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

type authData struct {
	Data struct {
		Token string `json:"token"`
	} `json:"data"`
}

// authenticate creates the first admin, or logs in when one already exists.
func (c *apiClient) authenticate(ctx context.Context, email, password string) error {
	creds := map[string]string{"email": email, "password": password}
	var out authData
	setupErr := c.call(ctx, http.MethodPost, "/api/v1/admin/setup", creds, false, &out)
	if setupErr != nil {
		// 409 is the normal "admin exists" case; for anything else still try
		// to log in, and report both failures if that does not work either.
		out = authData{}
		if err := c.call(ctx, http.MethodPost, "/api/v1/admin/auth/login", creds, false, &out); err != nil {
			if statusOf(setupErr) == http.StatusConflict {
				return fmt.Errorf("admin login: %w", err)
			}
			return fmt.Errorf("admin setup: %v; admin login: %w", setupErr, err)
		}
	}
	if out.Data.Token == "" {
		return errors.New("admin auth: server returned no token")
	}
	c.token = out.Data.Token
	return nil
}

func collPath(name string) string { return "/api/v1/" + url.PathEscape(name) }

// ensureCollection creates the benchmark collection (dropping it first when
// fresh is set). An existing collection is reused.
func (c *apiClient) ensureCollection(ctx context.Context, name string, fresh bool) error {
	if fresh {
		err := c.call(ctx, http.MethodDelete, "/api/v1/admin/collections/"+url.PathEscape(name), nil, true, nil)
		if err != nil && statusOf(err) != http.StatusNotFound {
			return fmt.Errorf("dropping collection: %w", err)
		}
	}
	empty := ""
	def := map[string]any{
		"name": name,
		"type": "base",
		"fields": []map[string]string{
			{"name": "title", "type": "text"},
			{"name": "n", "type": "number"},
			{"name": "done", "type": "bool"},
		},
		"view_rule":   empty,
		"create_rule": empty,
		"update_rule": empty,
		"delete_rule": empty,
	}
	createErr := c.call(ctx, http.MethodPost, "/api/v1/admin/collections", def, true, nil)
	if createErr == nil {
		return nil
	}
	// Most likely it exists already; check that it answers list requests.
	if _, err := c.count(ctx, name); err != nil {
		return fmt.Errorf("creating collection: %v (and it is not listable: %v)", createErr, err)
	}
	return nil
}

type listPage struct {
	Data []struct {
		ID json.RawMessage `json:"id"`
	} `json:"data"`
	Page       int `json:"page"`
	PerPage    int `json:"perPage"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

// count returns the number of records in the collection.
func (c *apiClient) count(ctx context.Context, name string) (int, error) {
	var p listPage
	if err := c.call(ctx, http.MethodGet, collPath(name)+"?perPage=1", nil, false, &p); err != nil {
		return 0, err
	}
	return p.TotalItems, nil
}

// listIDs pages through the collection collecting up to max record ids.
func (c *apiClient) listIDs(ctx context.Context, name string, max int) ([]string, error) {
	const perPage = 500
	var ids []string
	for page := 1; len(ids) < max; page++ {
		var p listPage
		path := fmt.Sprintf("%s?page=%d&perPage=%d&skipTotal=1", collPath(name), page, perPage)
		if err := c.call(ctx, http.MethodGet, path, nil, false, &p); err != nil {
			return ids, err
		}
		for _, r := range p.Data {
			if id := idString(r.ID); id != "" && len(ids) < max {
				ids = append(ids, id)
			}
		}
		// The server may cap perPage below what we asked for, so a page is
		// the last one only when it is empty or shorter than its own perPage.
		if len(p.Data) == 0 || (p.PerPage > 0 && len(p.Data) < p.PerPage) ||
			(p.TotalPages > 0 && page >= p.TotalPages) {
			break
		}
	}
	return ids, nil
}

// idString turns a JSON id (string or number) into its path form.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	t := strings.TrimSpace(string(raw))
	if t == "null" {
		return ""
	}
	return t
}

// createRecord inserts one record and returns its id.
func (c *apiClient) createRecord(ctx context.Context, name string, body []byte) (string, error) {
	req, err := createRequest(ctx, c.base, name, body)
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", &apiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	var out struct {
		Data struct {
			ID json.RawMessage `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("create record: decoding body: %w", err)
	}
	return idString(out.Data.ID), nil
}

// etag returns the current ETag of a record (GET /api/v1/:collection/:id).
func (c *apiClient) etag(ctx context.Context, name, id string) (string, error) {
	req, err := getRequest(ctx, c.base, name, id)
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", &apiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	tag := resp.Header.Get("ETag")
	if tag == "" {
		return "", fmt.Errorf("GET %s: no ETag in the answer", req.URL.Path)
	}
	return tag, nil
}

// serverMetrics mirrors GET /api/v1/_/metrics; every figure is optional.
type serverMetrics struct {
	PID          *float64 `json:"pid"`
	CPUSeconds   *float64 `json:"process_cpu_seconds"`
	FSMBatches   *float64 `json:"fsm_batches_total"`
	FSMCommands  *float64 `json:"fsm_commands_total"`
	BatchCmdsP50 *float64 `json:"fsm_batch_commands_p50"`
	BatchCmdsP99 *float64 `json:"fsm_batch_commands_p99"`
}

// metrics fetches the metrics of the node at base; nil when the endpoint is
// missing or fails (older servers), so callers just omit the server-side
// figures. The admin token is valid on every node of a cluster.
func (c *apiClient) metrics(ctx context.Context, base string) *serverMetrics {
	var out struct {
		Data serverMetrics `json:"data"`
	}
	if err := c.callAt(ctx, base, http.MethodGet, "/api/v1/_/metrics", nil, true, &out); err != nil {
		return nil
	}
	return &out.Data
}

// nodeMetrics fetches the metrics of every node in bases.
func (c *apiClient) nodeMetrics(ctx context.Context, bases []string) []*serverMetrics {
	out := make([]*serverMetrics, len(bases))
	for i, b := range bases {
		out[i] = c.metrics(ctx, b)
	}
	return out
}
