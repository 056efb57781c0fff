package cluster

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustSign(t *testing.T, key, target string, at time.Time, body []byte) string {
	t.Helper()
	h, err := SignJoin(key, target, at, body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestJoinAuth(t *testing.T) {
	started := time.Unix(1_800_000_000, 0)
	now := started.Add(time.Minute)
	body := []byte(`{"id":"n2"}`)
	for name, c := range map[string]struct {
		key, header string
		at          time.Time
		body        string
		want        error
	}{
		"wrong key":           {"other", mustSign(t, "k", "n1", now, body), now, string(body), ErrJoinAuth},
		"changed body":        {"k", mustSign(t, "k", "n1", now, body), now, `{"id":"n3"}`, ErrJoinAuth},
		"too old":             {"k", mustSign(t, "k", "n1", now, body), now.Add(61 * time.Second), string(body), ErrJoinAuth},
		"from the future":     {"k", mustSign(t, "k", "n1", now.Add(61*time.Second), body), now, string(body), ErrJoinAuth},
		"garbage header":      {"k", "nope", now, string(body), ErrJoinAuth},
		"v2 without a target": {"k", "v2.1.2.3", now, string(body), ErrJoinAuth},
		"no key":              {"", mustSign(t, "k", "n1", now, body), now, string(body), ErrJoinAuth},
		"version 1 header":    {"k", SignJoinV1("k", now, body), now, string(body), ErrJoinV1},
		"target changed": {"k", strings.TrimSuffix(mustSign(t, "k", "n1", now, body), "n1") + "n3", now, string(body),
			ErrJoinAuth},
		"signed for another member":         {"k", mustSign(t, "k", "n3", now, body), now, string(body), ErrJoinOtherNode},
		"signed before the member started":  {"k", mustSign(t, "k", "n1", started.Add(-time.Second), body), started.Add(5 * time.Second), string(body), ErrJoinReplayed},
		"target with dots, for another one": {"k", mustSign(t, "k", "n1.eu", now, body), now, string(body), ErrJoinOtherNode},
	} {
		v := NewJoinVerifier(c.key, "n1", started)
		if err := v.Verify(c.header, c.at, []byte(c.body)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// TestJoinReplay: a member accepts a signed join once; the same header
// again is refused for as long as its timestamp is acceptable at all,
// while a new signature of the same body (a retry) is accepted.
func TestJoinReplay(t *testing.T) {
	started := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"n2","addr":"10.0.0.2:8300"}`)
	v := NewJoinVerifier("k", "n1", started)
	h := mustSign(t, "k", "n1", started.Add(time.Second), body)
	if err := v.Verify(h, started.Add(2*time.Second), body); err != nil {
		t.Fatalf("first use refused: %v", err)
	}
	for _, at := range []time.Duration{2 * time.Second, 30 * time.Second, 61 * time.Second} {
		if err := v.Verify(h, started.Add(at), body); !errors.Is(err, ErrJoinReplayed) {
			t.Errorf("replay at +%v: %v, want %v", at, err, ErrJoinReplayed)
		}
	}
	if err := v.Verify(h, started.Add(62*time.Second), body); !errors.Is(err, ErrJoinAuth) {
		t.Errorf("replay after the window: %v, want %v", err, ErrJoinAuth)
	}
	retry := mustSign(t, "k", "n1", started.Add(62*time.Second), body)
	if err := v.Verify(retry, started.Add(62*time.Second), body); err != nil {
		t.Errorf("a new signature of the same body refused: %v", err)
	}
	if n := len(v.seen); n != 1 {
		t.Errorf("%d signatures remembered, want only the retry's (the first one is out of the window)", n)
	}
	// Another member, holding the same key, refuses what was signed for n1.
	other := NewJoinVerifier("k", "n3", started)
	if err := other.Verify(retry, started.Add(62*time.Second), body); !errors.Is(err, ErrJoinOtherNode) {
		t.Errorf("join for n1 sent to n3: %v, want %v", err, ErrJoinOtherNode)
	}
}

func TestSeal(t *testing.T) {
	sealed, err := Seal("k", []byte("jwt secret"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Unseal("k", sealed); err != nil || string(got) != "jwt secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := Unseal("other", sealed); err == nil {
		t.Fatal("opened with the wrong key")
	}
}
