package crypt

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 32)
	for name, s := range map[string]string{
		"hex":       hex.EncodeToString(raw),
		"base64":    base64.StdEncoding.EncodeToString(raw),
		"base64url": base64.RawURLEncoding.EncodeToString(raw),
	} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%s: %x %v", name, got, err)
		}
	}
	if got, err := ParseKey(strings.Repeat("k", 32)); err != nil || string(got) != strings.Repeat("k", 32) {
		t.Errorf("32 characters: %q %v", got, err)
	}
	for _, bad := range []string{"", "short", strings.Repeat("z", 64), base64.StdEncoding.EncodeToString(raw[:16])} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestSealOpenRotate(t *testing.T) {
	oldKey, newKeyText := strings.Repeat("o", 32), strings.Repeat("n", 32)
	old, err := NewKeyring(oldKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("s3cret value")
	if err != nil || !IsSealed(sealed) || strings.Contains(sealed, "s3cret") || KeyID(sealed) != old.CurrentID() {
		t.Fatalf("sealed %q %v", sealed, err)
	}
	again, _ := old.Seal("s3cret value")
	if again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if got, err := old.Open(sealed); err != nil || got != "s3cret value" {
		t.Fatalf("open: %q %v", got, err)
	}
	ring, err := NewKeyring(newKeyText, []string{oldKey})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ring.Open(sealed); err != nil || got != "s3cret value" {
		t.Fatalf("open with the old key in the ring: %q %v", got, err)
	}
	fresh, _ := NewKeyring(newKeyText, nil)
	if _, err := fresh.Open(sealed); !errors.Is(err, ErrNoKey) {
		t.Fatalf("open without the old key: %v", err)
	}
	if got, _ := ring.Open("plain text"); got != "plain text" {
		t.Fatalf("plain text passes through: %q", got)
	}
	// Tampering and relabelling fail.
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := old.Open(tampered); err == nil {
		t.Fatal("a tampered value opened")
	}
	relabelled := strings.Replace(sealed, KeyID(sealed), ring.CurrentID(), 1)
	if _, err := ring.Open(relabelled); err == nil {
		t.Fatal("a relabelled value opened")
	}
	if old.Fingerprint() == ring.Fingerprint() || !strings.HasPrefix(ring.Fingerprint(), "sha256:") {
		t.Fatal("fingerprints")
	}
}
