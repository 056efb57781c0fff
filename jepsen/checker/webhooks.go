package checker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Webhook deliveries under faults. What a receiver got is checked against
// what the cluster committed:
//
//   - every committed change was delivered at least once;
//   - no delivery is for a change that was not committed (or never
//     attempted);
//   - every delivery is signed as SPEC.md says: x-svc-signature is
//     "sha256=" and the hex HMAC-SHA-256 of "<x-svc-timestamp>.<body>"
//     under the secret, and x-svc-delivery and x-svc-event repeat the
//     body's id and event;
//   - a delivery received more than once (at-least-once delivery: a
//     leader that dies between its attempt and the record of it leaves
//     the attempt to the next leader) has an election between each two
//     of its receipts: duplicates appear only across leader changes.

// WebhookReceipt is one request the receiver got.
type WebhookReceipt struct {
	At        time.Time `json:"at"`
	From      string    `json:"from"` // the sender's address
	Delivery  string    `json:"delivery"`
	Event     string    `json:"event"`
	Timestamp string    `json:"timestamp"`
	Signature string    `json:"signature"`
	Body      []byte    `json:"body"`
}

// WebhookHistory is what the check needs.
type WebhookHistory struct {
	// Secret is the webhook's secret, as given.
	Secret   string
	Receipts []WebhookReceipt
	// KeyField is the record field that names a change; Committed and
	// Attempted hold the keys of the changes the cluster committed (read
	// back after the run) and of those the clients tried.
	KeyField  string
	Committed map[string]bool
	Attempted map[string]bool
	// Elections are when new terms were first seen; Slack is how late the
	// observer may have seen one (its polling period and then some).
	Elections []time.Time
	Slack     time.Duration
}

// WebhookResult is the check's finding.
type WebhookResult struct {
	Receipts  int `json:"receipts"`
	Delivered int `json:"delivered"` // committed changes delivered
	// Missing are committed changes never delivered; Unexpected
	// deliveries of changes not committed.
	Missing    []string `json:"missing,omitempty"`
	Unexpected []string `json:"unexpected,omitempty"`
	// BadSignatures counts receipts whose signature does not verify;
	// Mismatched those whose headers disagree with their body (or whose
	// body is not a delivery).
	BadSignatures int `json:"bad_signatures"`
	Mismatched    int `json:"mismatched"`
	// Duplicates counts deliveries received more than once; Unexplained
	// lists those with two receipts and no election between them.
	Duplicates  int      `json:"duplicates"`
	Unexplained []string `json:"unexplained,omitempty"`
	// Why shows, for the first unexplained duplicates, when and from
	// which sender each receipt came and the elections seen, so that a
	// failure can be diagnosed from the report alone.
	Why []string `json:"why,omitempty"`
}

// Valid reports a history with nothing wrong in it.
func (r WebhookResult) Valid() bool {
	return len(r.Missing) == 0 && len(r.Unexpected) == 0 && r.BadSignatures == 0 && r.Mismatched == 0 && len(r.Unexplained) == 0
}

func (r WebhookResult) String() string {
	return fmt.Sprintf("%d receipts, %d committed changes delivered, %d missing, %d unexpected, %d bad signatures, %d mismatched, %d duplicates (%d not across a leader change)",
		r.Receipts, r.Delivered, len(r.Missing), len(r.Unexpected), r.BadSignatures, r.Mismatched, r.Duplicates, len(r.Unexplained))
}

// CheckWebhooks checks h.
func CheckWebhooks(h WebhookHistory) WebhookResult {
	res := WebhookResult{Receipts: len(h.Receipts)}
	delivered := map[string]bool{}
	unexpected := map[string]bool{}
	byDelivery := map[string][]WebhookReceipt{}
	for _, r := range h.Receipts {
		if !SignatureValid(h.Secret, r.Timestamp, r.Signature, r.Body) {
			res.BadSignatures++
			continue
		}
		var body struct {
			ID    string `json:"id"`
			Event string `json:"event"`
			Data  struct {
				Record map[string]any `json:"record"`
			} `json:"data"`
		}
		if json.Unmarshal(r.Body, &body) != nil || body.ID != r.Delivery || body.Event != r.Event || body.Data.Record == nil {
			res.Mismatched++
			continue
		}
		key, _ := body.Data.Record[h.KeyField].(string)
		if !h.Committed[key] || !h.Attempted[key] {
			unexpected[key] = true
			continue
		}
		delivered[key] = true
		byDelivery[r.Delivery] = append(byDelivery[r.Delivery], r)
	}
	res.Delivered = len(delivered)
	for k := range h.Committed {
		if !delivered[k] {
			res.Missing = append(res.Missing, k)
		}
	}
	for k := range unexpected {
		res.Unexpected = append(res.Unexpected, k)
	}
	elections := append([]time.Time(nil), h.Elections...)
	sort.Slice(elections, func(i, j int) bool { return elections[i].Before(elections[j]) })
	for id, rs := range byDelivery {
		if len(rs) < 2 {
			continue
		}
		res.Duplicates++
		sort.Slice(rs, func(i, j int) bool { return rs[i].At.Before(rs[j].At) })
		for i := 1; i < len(rs); i++ {
			if !electionBetween(elections, rs[i-1].At.Add(-h.Slack), rs[i].At.Add(h.Slack)) {
				res.Unexplained = append(res.Unexplained, id)
				res.Why = append(res.Why, duplicateWhy(id, rs))
				break
			}
		}
	}
	sort.Strings(res.Missing)
	sort.Strings(res.Unexpected)
	sort.Strings(res.Unexplained)
	sort.Strings(res.Why)
	if len(res.Why) > 5 {
		res.Why = res.Why[:5]
	}
	if len(res.Why) > 0 {
		var es []string
		for _, e := range elections {
			es = append(es, e.UTC().Format("15:04:05.000"))
		}
		res.Why = append(res.Why, "elections seen at "+strings.Join(es, ", "))
	}
	return res
}

// electionBetween reports an election in [from, to].
func electionBetween(sorted []time.Time, from, to time.Time) bool {
	i := sort.Search(len(sorted), func(i int) bool { return !sorted[i].Before(from) })
	return i < len(sorted) && !sorted[i].After(to)
}

// SignatureValid checks a delivery's x-svc-signature as a receiver
// would: "sha256=" and the hex HMAC-SHA-256, under secret, of
// "<timestamp>.<body>", compared in constant time.
func SignatureValid(secret, timestamp, signature string, body []byte) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(signature))
}

// duplicateWhy describes the receipts of one delivery: when, from whom.
func duplicateWhy(id string, rs []WebhookReceipt) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.At.UTC().Format("15:04:05.000") + " from " + r.From
	}
	return id + " received at " + strings.Join(parts, ", ")
}
