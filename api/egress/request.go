package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Requests of admin-written code (engine/jsvm): helpers.http goes through
// the Guard, helpers.fetch through an Unguarded client (SPEC.md: fetch is
// raw; admin-authored code has host access). Both read at most the
// number of bytes the caller names and fail beyond it, so code cannot
// make the node hold an unbounded response.

// ErrTooLarge is a response body longer than the caller's limit.
var ErrTooLarge = errors.New("egress: the response body is larger than the limit")

// Request performs one guarded request: method to url with header and
// body (nil: none), reading at most maxBytes of the response body
// (ErrTooLarge beyond). Redirects are followed (at most 5), each dial
// checked.
func (g *Guard) Request(ctx context.Context, method, url string, header map[string]string, body []byte, maxBytes int64) (int, map[string][]string, []byte, error) {
	return request(ctx, g.client, method, url, header, body, maxBytes)
}

// Unguarded is an HTTP client that dials any address: the raw fetch of
// admin-written code.
type Unguarded struct{ client *http.Client }

// NewUnguarded returns an unguarded client with the guard's timeouts.
func NewUnguarded() *Unguarded {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &Unguarded{client: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			Proxy:               http.ProxyFromEnvironment,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConns:        16,
			IdleConnTimeout:     30 * time.Second,
		},
	}}
}

// Request is Guard.Request without the destination check.
func (u *Unguarded) Request(ctx context.Context, method, url string, header map[string]string, body []byte, maxBytes int64) (int, map[string][]string, []byte, error) {
	return request(ctx, u.client, method, url, header, body, maxBytes)
}

func request(ctx context.Context, c *http.Client, method, url string, header map[string]string, body []byte, maxBytes int64) (int, map[string][]string, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if !strings.EqualFold(req.URL.Scheme, "http") && !strings.EqualFold(req.URL.Scheme, "https") {
		return 0, nil, nil, fmt.Errorf("egress: scheme %q is not allowed", req.URL.Scheme)
	}
	for k, v := range header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBytes+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if int64(len(b)) > maxBytes {
		return res.StatusCode, res.Header, nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, maxBytes)
	}
	return res.StatusCode, res.Header, b, nil
}
