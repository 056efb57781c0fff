package checker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

const testSecret = "s3cr3t"

var t0 = time.Unix(1_800_000_000, 0)

// receipt is a well-formed, signed delivery of the change with key k.
func receipt(delivery, k string, at time.Time) WebhookReceipt {
	body := fmt.Sprintf(`{"id":%q,"event":"hooked.create","timestamp":1,"data":{"record":{"id":"r%s","k":%q}}}`, delivery, k, k)
	ts := fmt.Sprint(at.Unix())
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(ts + "." + body))
	return WebhookReceipt{At: at, From: "10.0.0.2", Delivery: delivery, Event: "hooked.create", Timestamp: ts,
		Signature: "sha256=" + hex.EncodeToString(mac.Sum(nil)), Body: []byte(body)}
}

func history(receipts ...WebhookReceipt) WebhookHistory {
	return WebhookHistory{
		Secret: testSecret, Receipts: receipts, KeyField: "k",
		Committed: map[string]bool{"a": true, "b": true},
		Attempted: map[string]bool{"a": true, "b": true, "c": true},
		Elections: []time.Time{t0.Add(10 * time.Second)},
		Slack:     time.Second,
	}
}

func TestCheckWebhooksAcceptsAValidHistory(t *testing.T) {
	// b is delivered twice, across the election at +10 s: allowed, counted.
	res := CheckWebhooks(history(receipt("d1", "a", t0), receipt("d2", "b", t0.Add(9*time.Second)), receipt("d2", "b", t0.Add(12*time.Second))))
	if !res.Valid() || res.Delivered != 2 || res.Duplicates != 1 {
		t.Fatalf("a valid history: %s", res)
	}
}

func TestCheckWebhooksCatchesAMissingDelivery(t *testing.T) {
	res := CheckWebhooks(history(receipt("d1", "a", t0)))
	if res.Valid() || len(res.Missing) != 1 || res.Missing[0] != "b" {
		t.Fatalf("b was committed and never delivered: %s %v", res, res.Missing)
	}
}

func TestCheckWebhooksCatchesABadSignature(t *testing.T) {
	bad := receipt("d2", "b", t0)
	bad.Body = []byte(string(bad.Body[:len(bad.Body)-2]) + ` }}`) // the body changed after signing
	res := CheckWebhooks(history(receipt("d1", "a", t0), bad))
	if res.Valid() || res.BadSignatures != 1 {
		t.Fatalf("a body that does not match its signature: %s", res)
	}
	other := receipt("d3", "b", t0)
	other.Timestamp = fmt.Sprint(t0.Unix() + 1) // signed for another timestamp
	if res := CheckWebhooks(history(receipt("d1", "a", t0), other)); res.Valid() || res.BadSignatures != 1 {
		t.Fatalf("a signature over another timestamp: %s", res)
	}
}

func TestCheckWebhooksCatchesAnUncommittedDelivery(t *testing.T) {
	res := CheckWebhooks(history(receipt("d1", "a", t0), receipt("d2", "b", t0), receipt("d3", "c", t0)))
	if res.Valid() || len(res.Unexpected) != 1 || res.Unexpected[0] != "c" {
		t.Fatalf("c was attempted but not committed, yet delivered: %s", res)
	}
}

func TestCheckWebhooksCatchesADuplicateWithoutAnElection(t *testing.T) {
	res := CheckWebhooks(history(receipt("d1", "a", t0), receipt("d2", "b", t0), receipt("d2", "b", t0.Add(3*time.Second))))
	if res.Valid() || res.Duplicates != 1 || len(res.Unexplained) != 1 {
		t.Fatalf("a duplicate with no leader change between: %s", res)
	}
}

func TestCheckWebhooksCatchesMismatchedHeaders(t *testing.T) {
	r := receipt("d2", "b", t0)
	r.Delivery = "d9"
	res := CheckWebhooks(history(receipt("d1", "a", t0), r))
	if res.Valid() || res.Mismatched != 1 {
		t.Fatalf("x-svc-delivery differs from the body's id: %s", res)
	}
}
