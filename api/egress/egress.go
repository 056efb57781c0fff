// Package egress owns the node's outbound HTTP: every request that admin
// settings or admin-written code can aim (mail over HTTP, the breached-
// password check, webhook deliveries through NewTransport, hooks later)
// goes through a Guard, which
// refuses private, loopback, link-local, metadata and other internal
// destinations unless the settings allow them. The check runs on the
// address actually dialled, after name resolution and on every redirect,
// so DNS rebinding and redirects cannot reach what a URL check would miss.
package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Settings read by the guard (SPEC.md): hooks.http.deny replaces the
// default denied ranges ("off" denies nothing), hooks.http.allow lists
// ranges allowed even when denied.
const (
	SettingDeny  = "hooks.http.deny"
	SettingAllow = "hooks.http.allow"
)

// DefaultDeny are the ranges refused when hooks.http.deny is empty:
// this host, private networks, carrier-grade NAT (cloud metadata services
// live there too), link-local (169.254.169.254), documentation and
// benchmark nets, multicast and reserved space, in IPv4 and IPv6.
var DefaultDeny = []string{
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4", "240.0.0.0/4",
	"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
}

// maxBody bounds the response bodies Get and Post read.
const maxBody = 1 << 20

// Guard checks destinations against the settings in force.
type Guard struct {
	setting func(key string) string
	client  *http.Client
}

// New returns a guard reading its settings through setting (the
// replicated settings store) at each dial.
func New(setting func(key string) string) *Guard {
	g := &Guard{setting: setting}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	g.client = &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			Proxy:               nil, // a proxy would dial for us, unchecked
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConns:        16,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("egress: too many redirects")
			}
			return nil // the redirect's dial is checked like any other
		},
	}
	return g
}

// Client is the guarded HTTP client.
func (g *Guard) Client() *http.Client { return g.client }

// DeniedError is a dial the guard refused.
type DeniedError struct {
	Addr  netip.Addr
	Range string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("egress: %s is in a denied range (%s); allow it with the %s setting", e.Addr, e.Range, SettingAllow)
}

// Check reports whether a may be dialled under the current settings.
func (g *Guard) Check(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	for _, p := range parsePrefixes(g.setting(SettingAllow)) {
		if p.Contains(a) {
			return nil
		}
	}
	deny := strings.TrimSpace(g.setting(SettingDeny))
	if strings.EqualFold(deny, "off") {
		return nil
	}
	list := DefaultDeny
	if deny != "" {
		list = strings.Split(deny, ",")
	}
	for _, s := range list {
		if p, ok := parsePrefix(s); ok && p.Contains(a) {
			return &DeniedError{Addr: a, Range: p.String()}
		}
	}
	return nil
}

// control runs before each connect, on the resolved address.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: unexpected dial address %q", address)
	}
	return g.Check(ap.Addr())
}

// parsePrefixes reads a comma list of CIDRs or bare addresses, skipping
// what is neither.
func parsePrefixes(s string) []netip.Prefix {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if p, ok := parsePrefix(f); ok {
			out = append(out, p)
		}
	}
	return out
}

func parsePrefix(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Prefix{}, false
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// Get performs a guarded GET (engine.Outbound).
func (g *Guard) Get(ctx context.Context, url string, header map[string]string) (int, []byte, error) {
	return g.do(ctx, http.MethodGet, url, header, nil)
}

// Post performs a guarded POST (engine.Outbound).
func (g *Guard) Post(ctx context.Context, url string, header map[string]string, body []byte) (int, []byte, error) {
	return g.do(ctx, http.MethodPost, url, header, body)
}

func (g *Guard) do(ctx context.Context, method, url string, header map[string]string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if !strings.EqualFold(req.URL.Scheme, "http") && !strings.EqualFold(req.URL.Scheme, "https") {
		return 0, nil, fmt.Errorf("egress: scheme %q is not allowed", req.URL.Scheme)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := g.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	return res.StatusCode, b, err
}
