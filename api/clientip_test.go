package api

import (
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// settingsEngine answers Setting from a map.
type settingsEngine struct {
	SettingStore
	settings map[string]string
}

func (e *settingsEngine) Setting(key string) string { return e.settings[key] }

func TestClientAddr(t *testing.T) {
	eng := &settingsEngine{settings: map[string]string{}}
	log := slog.New(slog.DiscardHandler)
	s := &Server{settings: eng, log: log, proxies: newProxyTrust("10.0.0.0/8, 192.0.2.10 bogus ::1", log)}
	for _, tc := range []struct {
		name, remote, setting string
		xff                   []string
		want                  string
	}{
		{name: "no proxy", remote: "198.51.100.1:5", want: "198.51.100.1"},
		{name: "untrusted peer's header ignored", remote: "198.51.100.1:5", xff: []string{"203.0.113.1"}, want: "198.51.100.1"},
		{name: "trusted peer, no header", remote: "10.1.1.1:5", want: "10.1.1.1"},
		{name: "trusted peer", remote: "10.1.1.1:5", xff: []string{"203.0.113.1"}, want: "203.0.113.1"},
		{name: "single IP entry", remote: "192.0.2.10:5", xff: []string{"203.0.113.1"}, want: "203.0.113.1"},
		{name: "neighbour of a single IP", remote: "192.0.2.11:5", xff: []string{"203.0.113.1"}, want: "192.0.2.11"},
		{name: "IPv6 loopback trusted", remote: "[::1]:5", xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		{name: "rightmost untrusted wins", remote: "10.1.1.1:5", xff: []string{"1.1.1.1, 203.0.113.1, 10.2.2.2"}, want: "203.0.113.1"},
		{name: "several headers in order", remote: "10.1.1.1:5", xff: []string{"1.1.1.1", "203.0.113.1, 10.2.2.2"}, want: "203.0.113.1"},
		{name: "all trusted: the leftmost", remote: "10.1.1.1:5", xff: []string{"10.3.3.3, 10.2.2.2"}, want: "10.3.3.3"},
		{name: "ports and brackets", remote: "10.1.1.1:5", xff: []string{"[2001:db8::1]:443, 10.2.2.2:80"}, want: "2001:db8::1"},
		{name: "bracketed, no port", remote: "10.1.1.1:5", xff: []string{"[2001:db8::2]"}, want: "2001:db8::2"},
		{name: "mapped IPv4", remote: "[::ffff:10.1.1.1]:5", xff: []string{"::ffff:203.0.113.1"}, want: "203.0.113.1"},
		{name: "garbage stops at the last good hop", remote: "10.1.1.1:5", xff: []string{"203.0.113.1, unknown, 10.2.2.2"}, want: "10.2.2.2"},
		{name: "empty entries skipped", remote: "10.1.1.1:5", xff: []string{" , 203.0.113.1 ,, "}, want: "203.0.113.1"},
		{name: "setting overrides env", remote: "10.1.1.1:5", setting: "198.51.100.0/24", xff: []string{"203.0.113.1"}, want: "10.1.1.1"},
		{name: "setting trusts its own", remote: "198.51.100.1:5", setting: "198.51.100.0/24", xff: []string{"203.0.113.1"}, want: "203.0.113.1"},
		{name: "blank setting defers to env", remote: "10.1.1.1:5", setting: "  ", xff: []string{"203.0.113.1"}, want: "203.0.113.1"},
		{name: "not an IP peer", remote: "pipe", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng.settings[trustedProxiesSetting] = tc.setting
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientIP(r); got != tc.want {
				t.Errorf("clientIP = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseProxyEntry(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/8": "10.0.0.0/8", "10.1.2.3/8": "10.0.0.0/8", "192.0.2.1": "192.0.2.1/32",
		"::1": "::1/128", "::ffff:10.0.0.0/104": "10.0.0.0/8", "fe80::1%eth0": "fe80::1/128",
	} {
		p, err := parseProxyEntry(in)
		if err != nil || p != netip.MustParsePrefix(want) {
			t.Errorf("%s: %v %v, want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"bogus", "10.0.0.0/33", "1.2.3.4:80"} {
		if _, err := parseProxyEntry(in); err == nil {
			t.Errorf("%s: want an error", in)
		}
	}
}
