// Package pushtest runs local stand-ins of the push providers for tests:
// an FCM HTTP v1 API with its OAuth2 token endpoint (fcm.go), an APNs
// HTTP/2 server over TLS (apns.go) and the hosted provider's REST API
// (hosted.go). Each checks a request the way the provider would (the
// service account's signed JWT and the bearer token it bought, the APNs
// provider token's ES256 signature and claims, the raw REST key in Basic
// auth, the message's shape), refuses what the provider would refuse,
// records what it accepted, and answers each target as the test says.
package pushtest

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
)

// Reply is how a stand-in answers sends to one target: an HTTP status
// and the provider's error code (FCM's errorCode, APNs' reason).
type Reply struct {
	Status int
	Code   string
}

// Received is one accepted send.
type Received struct {
	// Target is the device token, or the user id for the hosted
	// provider.
	Target string
	Title  string
	Body   string
	// Data are the data members as sent.
	Data map[string]any
	// Key is the collapse key sent (FCM's Android tag, APNs'
	// apns-collapse-id, the hosted provider's external_id).
	Key    string
	Header http.Header
	// Raw is the request body.
	Raw json.RawMessage
}

// recorder keeps what a stand-in received and how it answers.
type recorder struct {
	t        testing.TB
	mu       sync.Mutex
	replies  map[string]Reply
	received []Received
	refused  []string
	calls    int
}

func newRecorder(t testing.TB) *recorder { return &recorder{t: t, replies: map[string]Reply{}} }

// Reply makes the stand-in answer sends to target with r.
func (r *recorder) Reply(target string, rep Reply) {
	r.mu.Lock()
	r.replies[target] = rep
	r.mu.Unlock()
}

// replyFor is how to answer target (zero: accept).
func (r *recorder) replyFor(target string) Reply {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return r.replies[target]
}

func (r *recorder) accept(rc Received) {
	r.mu.Lock()
	r.received = append(r.received, rc)
	r.mu.Unlock()
}

// refuse notes a request the provider would refuse (a test that expects
// none checks Refused).
func (r *recorder) refuse(why string) {
	r.mu.Lock()
	r.refused = append(r.refused, why)
	r.mu.Unlock()
}

// Received are the accepted sends, in order.
func (r *recorder) Received() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.received...)
}

// Refused are the reasons of the requests refused for their form or
// credentials.
func (r *recorder) Refused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.refused...)
}

// Calls counts the send requests that reached the stand-in (accepted or
// answered with a Reply).
func (r *recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
