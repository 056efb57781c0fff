package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one request of a Client unless Timeout is set.
const DefaultTimeout = 10 * time.Second

// Admin credentials every harness-made node uses.
const (
	AdminEmail    = "jepsen@example.com"
	AdminPassword = "jepsen-password-0123456789"
)

// Client speaks svcd's HTTP API. Each request is bounded by Timeout (and by
// the caller's context). Copies made with WithToken share the connection
// pool.
type Client struct {
	BaseURL string
	Token   string // sent as Authorization: Bearer when set
	Timeout time.Duration
	HTTP    *http.Client
	// Header holds extra request headers sent with every request
	// (X-Svc-Min-Index, X-Svc-Consistency); set it through WithHeader.
	Header http.Header
}

// NewClient returns a client for baseURL with its own connection pool, large
// enough for a few dozen concurrent requests without churning connections.
func NewClient(baseURL string) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{BaseURL: baseURL, Timeout: DefaultTimeout, HTTP: &http.Client{Transport: tr}}
}

// WithToken returns a copy of c that authenticates with tok.
func (c *Client) WithToken(tok string) *Client {
	cp := *c
	cp.Token = tok
	return &cp
}

// WithHeader returns a copy of c that also sends the header key: value
// with every request (an empty value removes it).
func (c *Client) WithHeader(key, value string) *Client {
	cp := *c
	cp.Header = c.Header.Clone()
	if cp.Header == nil {
		cp.Header = http.Header{}
	}
	if value == "" {
		cp.Header.Del(key)
	} else {
		cp.Header.Set(key, value)
	}
	return &cp
}

// Strong returns a copy of c whose reads are linearizable
// (X-Svc-Consistency: strong).
func (c *Client) Strong() *Client { return c.WithHeader("X-Svc-Consistency", "strong") }

// MinIndex returns a copy of c whose reads wait until the node has applied
// index idx (X-Svc-Min-Index).
func (c *Client) MinIndex(idx uint64) *Client {
	return c.WithHeader("X-Svc-Min-Index", strconv.FormatUint(idx, 10))
}

// CloseIdle drops the pool's idle connections.
func (c *Client) CloseIdle() { c.HTTP.CloseIdleConnections() }

// Response is a fully read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(v any) error { return json.Unmarshal(r.Body, v) }

// APIError is svcd's error envelope.
type APIError struct {
	Error   string         `json:"error"`
	Code    int            `json:"code"`
	Details map[string]any `json:"details"`
}

// APIError decodes the body as an error envelope (zero value when it is not
// one).
func (r *Response) APIError() APIError {
	var e APIError
	json.Unmarshal(r.Body, &e)
	return e
}

// Index is the X-Svc-Index header (0 when absent).
func (r *Response) Index() uint64 {
	n, _ := strconv.ParseUint(r.Header.Get("X-Svc-Index"), 10, 64)
	return n
}

func (r *Response) String() string {
	b := r.Body
	if len(b) > 300 {
		b = append(b[:300:300], "..."...)
	}
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(b))
}

// Do sends one request. body is sent as is when it is []byte or
// json.RawMessage, JSON-encoded otherwise, and omitted when nil. A non-nil
// error means no HTTP answer was received (connection refused or reset,
// timeout): for a write, its outcome is unknown.
func (c *Client) Do(ctx context.Context, method, path string, body any) (*Response, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case json.RawMessage:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(enc)
	}
	contentType := ""
	if rd != nil {
		contentType = "application/json"
	}
	return c.send(ctx, method, path, rd, contentType)
}

// send sends one request with body rd (nil: none) of contentType within
// ctx, and reads the whole answer.
func (c *Client) send(ctx context.Context, method, path string, rd io.Reader, contentType string) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read body of %d answer: %w", resp.StatusCode, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// SetupAdmin creates the first admin through POST /api/v1/admin/setup, or
// logs in through POST /api/v1/admin/auth/login when one already exists
// (409), and returns the admin's bearer token.
func SetupAdmin(ctx context.Context, c *Client) (string, error) {
	creds := map[string]string{"email": AdminEmail, "password": AdminPassword}
	resp, err := c.Do(ctx, "POST", "/api/v1/admin/setup", creds)
	if err != nil {
		return "", fmt.Errorf("admin setup: %w", err)
	}
	switch resp.Status {
	case http.StatusCreated:
	case http.StatusConflict:
		if resp, err = c.Do(ctx, "POST", "/api/v1/admin/auth/login", creds); err != nil {
			return "", fmt.Errorf("admin login: %w", err)
		}
		if resp.Status != http.StatusOK {
			return "", fmt.Errorf("admin login: %s", resp)
		}
	default:
		return "", fmt.Errorf("admin setup: %s", resp)
	}
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := resp.JSON(&out); err != nil || out.Data.Token == "" {
		return "", fmt.Errorf("admin setup: no token in %s", resp)
	}
	return out.Data.Token, nil
}

// Record is one record of a list: its id and its JSON as served.
type Record struct {
	ID  string
	Raw json.RawMessage
}

// ListPerPage is the page size ListAll asks for (the API's maximum).
const ListPerPage = 500

// ListAll pages through GET /api/v1/<collection>?perPage=500&page=N (plus
// extra query parameters) until a short page, and returns every record in
// the order served. It fails when the pages disagree with the first page's
// totalItems.
func ListAll(ctx context.Context, c *Client, collection string, extra url.Values) ([]Record, error) {
	var all []Record
	total := -1
	for page := 1; ; page++ {
		q := url.Values{}
		for k, v := range extra {
			q[k] = v
		}
		q.Set("perPage", strconv.Itoa(ListPerPage))
		q.Set("page", strconv.Itoa(page))
		resp, err := c.Do(ctx, "GET", "/api/v1/"+url.PathEscape(collection)+"?"+q.Encode(), nil)
		if err != nil {
			return nil, fmt.Errorf("list page %d: %w", page, err)
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("list page %d: %s", page, resp)
		}
		var body struct {
			Data       []json.RawMessage `json:"data"`
			PerPage    int               `json:"perPage"`
			TotalItems int               `json:"totalItems"`
		}
		if err := resp.JSON(&body); err != nil {
			return nil, fmt.Errorf("list page %d: %w", page, err)
		}
		if page == 1 {
			total = body.TotalItems
		}
		for _, raw := range body.Data {
			var id struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(raw, &id); err != nil || id.ID == "" {
				return nil, fmt.Errorf("list page %d: record without id: %s", page, raw)
			}
			all = append(all, Record{ID: id.ID, Raw: raw})
		}
		if len(body.Data) < body.PerPage || len(body.Data) == 0 {
			break
		}
		if page > 100000 {
			return nil, errors.New("list: too many pages")
		}
	}
	if total >= 0 && total != len(all) {
		return all, fmt.Errorf("list: totalItems %d but %d records served", total, len(all))
	}
	return all, nil
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago (see
// FreePorts).
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

var ports struct {
	mu    sync.Mutex
	given map[int]bool
	rng   *rand.Rand
}

// FreePorts returns n distinct TCP ports that were free on 127.0.0.1 a
// moment ago. They are drawn below the kernel's ephemeral range, so an
// outgoing connection cannot take one as its source port while the node
// that owns it is down between a kill and a restart; no port is handed out
// twice in one test process. All n are held open together while choosing,
// so they are distinct from each other too.
func FreePorts(n int) ([]int, error) {
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.given == nil {
		ports.given = map[int]bool{}
		ports.rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	}
	lo, hi := 10000, ephemeralLow()
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("no free port found in [%d, %d) after %d tries", lo, hi, tries)
		}
		var ln net.Listener
		var err error
		if hi-lo < 1000 {
			ln, err = net.Listen("tcp", "127.0.0.1:0") // no room below the ephemeral range
		} else {
			ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+ports.rng.IntN(hi-lo))))
		}
		if err != nil {
			continue
		}
		p := ln.Addr().(*net.TCPAddr).Port
		if ports.given[p] {
			ln.Close()
			continue
		}
		held = append(held, ln)
		ports.given[p] = true
		out = append(out, p)
	}
	return out, nil
}

// ephemeralLow is the bottom of the kernel's ephemeral port range (32768
// when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 10000 {
		return 32768
	}
	return n
}
