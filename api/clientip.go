package api

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
)

// Client IP: the peer address of the connection, or, when that peer is a
// trusted proxy, the address it forwarded in X-Forwarded-For. Trusted
// proxies come from the setting security.trusted_proxies when it is not
// empty, else from SVC_TRUSTED_PROXIES (Options.TrustedProxies): a list of
// IPs and CIDRs separated by commas or spaces. Used by the rate limiter and,
// through clientIP, by anything else that records or keys on the caller's
// address.
//
// X-Forwarded-For is read right to left: each proxy appends the address it
// received the request from, so the rightmost entries were written by our
// own proxies and the leftmost may be anything the client sent. The client
// is the first entry, from the right, that is not itself a trusted proxy.
// Only X-Forwarded-For is read (not Forwarded or X-Real-IP).

// trustedProxiesSetting overrides Options.TrustedProxies when not empty.
const trustedProxiesSetting = "security.trusted_proxies"

// proxyTrust caches the parsed proxy list for the raw string it came from,
// so the setting is read live but parsed only when it changes.
type proxyTrust struct {
	env string
	log *slog.Logger
	cur atomic.Pointer[proxyList]
}

type proxyList struct {
	raw      string
	prefixes []netip.Prefix
}

func newProxyTrust(env string, log *slog.Logger) *proxyTrust {
	p := &proxyTrust{env: env, log: log}
	p.list(env) // warn about a bad SVC_TRUSTED_PROXIES at start-up
	return p
}

// list returns the proxies in force given the current setting value.
func (p *proxyTrust) list(setting string) *proxyList {
	raw := setting
	if strings.TrimSpace(raw) == "" {
		raw = p.env
	}
	if l := p.cur.Load(); l != nil && l.raw == raw {
		return l
	}
	l := &proxyList{raw: raw}
	for _, f := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		pr, err := parseProxyEntry(f)
		if err != nil {
			p.log.Warn("trusted proxies: ignoring an entry that is neither an IP nor a CIDR", "entry", f)
			continue
		}
		l.prefixes = append(l.prefixes, pr)
	}
	p.cur.Store(l)
	return l
}

func parseProxyEntry(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if pr.Addr().Is4In6() {
			pr = netip.PrefixFrom(pr.Addr().Unmap(), max(pr.Bits()-96, 0))
		}
		return pr.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (l *proxyList) trusts(a netip.Addr) bool {
	for _, p := range l.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the caller's address as text ("" when the peer address is
// not an IP, which a real listener never gives).
func (s *Server) clientIP(r *http.Request) string {
	a := s.clientAddr(r)
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// clientAddr is clientIP as a netip.Addr (IPv4 unmapped, no zone).
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	var peer netip.Addr
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		peer = ap.Addr().Unmap().WithZone("")
	} else {
		peer = parseHop(r.RemoteAddr)
	}
	if !peer.IsValid() {
		return peer
	}
	l := s.proxies.list(s.settings.Setting(trustedProxiesSetting))
	if len(l.prefixes) == 0 || !l.trusts(peer) {
		return peer
	}
	addr := peer
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		h := hops[i]
		for h != "" {
			var part string
			if j := strings.LastIndexByte(h, ','); j >= 0 {
				part, h = h[j+1:], h[:j]
			} else {
				part, h = h, ""
			}
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			a := parseHop(part)
			if !a.IsValid() {
				// A trusted proxy wrote garbage, or the client did and
				// everything right of it was trusted: the last address
				// we can vouch for is the answer.
				return addr
			}
			if !l.trusts(a) {
				return a
			}
			addr = a
		}
	}
	return addr
}

// parseHop parses an address as peers and proxies write it: "1.2.3.4",
// "1.2.3.4:80", "::1", "[::1]" or "[::1]:80". It returns the zero Addr when
// s is none of these.
func parseHop(s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
				return parseHop(s[1 : len(s)-1])
			}
			return netip.Addr{}
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone("")
}
