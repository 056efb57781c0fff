package cluster

import (
	"testing"
	"time"
)

func TestJoinAuth(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"n2"}`)
	h := SignJoin("k", now, body)
	if err := VerifyJoin("k", h, now.Add(10*time.Second), body); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	for name, c := range map[string]struct {
		key, header string
		at          time.Time
		body        string
	}{
		"wrong key":      {"other", h, now, string(body)},
		"changed body":   {"k", h, now, `{"id":"n3"}`},
		"too old":        {"k", h, now.Add(2 * time.Minute), string(body)},
		"garbage header": {"k", "nope", now, string(body)},
		"no key":         {"", h, now, string(body)},
	} {
		if err := VerifyJoin(c.key, c.header, c.at, []byte(c.body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
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
