package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"svcd/api/egress"
)

type settings map[string]string

func (s settings) get(k string) string { return s[k] }

func TestCheck(t *testing.T) {
	cases := []struct {
		addr  string
		deny  string
		allow string
		ok    bool
	}{
		{"93.184.216.34", "", "", true},
		{"2606:2800:220:1::1", "", "", true},
		{"127.0.0.1", "", "", false},
		{"10.1.2.3", "", "", false},
		{"172.31.255.255", "", "", false},
		{"192.168.1.1", "", "", false},
		{"169.254.169.254", "", "", false}, // cloud metadata
		{"100.100.100.200", "", "", false}, // metadata in CGNAT space
		{"0.0.0.0", "", "", false},
		{"::1", "", "", false},
		{"::ffff:127.0.0.1", "", "", false}, // mapped
		{"fd00:ec2::254", "", "", false},
		{"fe80::1", "", "", false},
		{"127.0.0.1", "off", "", true},
		{"127.0.0.1", "", "127.0.0.0/8", true},
		{"127.0.0.2", "", "127.0.0.1", false},
		{"10.1.2.3", "192.168.0.0/16", "", true}, // deny replaces the defaults
		{"192.168.5.5", "192.168.0.0/16", "", false},
		{"8.8.8.8", "8.8.8.0/24, garbage", "", false},
	}
	for _, c := range cases {
		g := egress.New(settings{egress.SettingDeny: c.deny, egress.SettingAllow: c.allow}.get)
		err := g.Check(netip.MustParseAddr(c.addr))
		if (err == nil) != c.ok {
			t.Errorf("%s deny=%q allow=%q: err %v, want ok=%v", c.addr, c.deny, c.allow, err, c.ok)
		}
	}
}

// TestGuardedRequests: a real server on loopback is refused by default
// (the dial is checked after resolution, "localhost" included), reachable
// when allowed; a redirect from an allowed server to a denied one is
// refused at the redirect's dial.
func TestGuardedRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello " + r.Method))
	}))
	defer srv.Close()
	ctx := context.Background()
	s := settings{}
	g := egress.New(s.get)

	_, _, err := g.Get(ctx, srv.URL, nil)
	var denied *egress.DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("loopback by default: %v", err)
	}
	host := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if _, _, err := g.Get(ctx, host, nil); !errors.As(err, &denied) {
		t.Fatalf("localhost by default: %v", err)
	}

	s[egress.SettingAllow] = "127.0.0.1/32"
	status, body, err := g.Post(ctx, srv.URL, map[string]string{"X-A": "b"}, []byte("x"))
	if err != nil || status != 200 || string(body) != "hello POST" {
		t.Fatalf("allowed: %d %q %v", status, body, err)
	}

	// An allowed public-looking front that redirects inside: simulate with
	// two loopback addresses, only one allowed.
	inner := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("inner")) }))
	inner.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2 not available: %v", err)
	}
	inner.Listener = ln
	inner.Start()
	defer inner.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL, http.StatusFound)
	}))
	defer front.Close()
	if _, _, err := g.Get(ctx, front.URL, nil); !errors.As(err, &denied) || denied.Addr.String() != "127.0.0.2" {
		t.Fatalf("redirect to a denied address: %v", err)
	}
	if _, _, err := g.Get(ctx, "file:///etc/passwd", nil); err == nil {
		t.Fatal("a file URL was fetched")
	}
}
