package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	fastjson "github.com/segmentio/encoding/json"

	"svcd/engine"
)

// batchEntry is one element of a batch body's requests array.
type batchEntry struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	// Body is decoded with the rest of the batch in one pass (numbers
	// kept exact): a record body is an object, handed to the engine
	// decoded.
	Body    any               `json:"body"`
	Headers map[string]string `json:"headers"`
}

// batchRequest is one parsed entry: the engine operation (in the slice
// handed to the engine as it is), the entry's method (for the caller's
// role) and its query (for @request.query).
type batchRequest struct {
	Op     *engine.BatchOp
	Method string
	Query  url.Values
}

// parseBatchBody reads a batch body: {requests: [{method, url, body?,
// headers?}]}, 1 to engine.MaxBatchOps entries, each a record operation on a
// versioned (/api/v1/:collection[/:id]) or legacy
// (/api/collections/:collection/records[/:id]) URL. Malformed JSON is a 400;
// a body of the wrong shape is a 422 whose message names the entry (0-based
// index) and whose details name the field.
func parseBatchBody(b []byte) ([]batchRequest, []engine.BatchOp, error) {
	var body struct {
		Requests []batchEntry `json:"requests"`
	}
	// segmentio's parser behaves as encoding/json's decoder at about
	// twice its speed (docs/benchmarks.md): a batch carries up to 100
	// records. Numbers stay exact (json.Number).
	rest, err := fastjson.Parse(b, &body, fastjson.UseNumber)
	if err != nil {
		return nil, nil, engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, nil, engine.Errorf(engine.KindBadRequest, "Invalid JSON body: data after the top-level value")
	}
	if n := len(body.Requests); n == 0 || n > engine.MaxBatchOps {
		return nil, nil, engine.ValidationError(map[string]string{
			"requests": fmt.Sprintf("must hold 1 to %d entries (got %d)", engine.MaxBatchOps, n),
		})
	}
	out := make([]batchRequest, len(body.Requests))
	ops := make([]engine.BatchOp, len(body.Requests))
	for i, e := range body.Requests {
		method, query, field, msg := parseBatchEntry(e, &ops[i])
		if msg != "" {
			return nil, nil, engine.BatchError(i, engine.ValidationError(map[string]string{field: msg}))
		}
		out[i] = batchRequest{Op: &ops[i], Method: method, Query: query}
	}
	return out, ops, nil
}

// parseBatchEntry fills op from one entry and returns the entry's method
// and query, or names the bad field with a message.
func parseBatchEntry(e batchEntry, op *engine.BatchOp) (method string, q url.Values, field, msg string) {
	path, q, ok := entryURL(e.URL)
	if !ok {
		return "", nil, "url", "must be a record path such as /api/v1/posts or /api/collections/posts/records/<id>"
	}
	coll, id, ok := recordPath(path)
	if !ok {
		return "", nil, "url", "is not a record URL (/api/v1/:collection[/:id] or /api/collections/:collection/records[/:id])"
	}
	method = strings.ToUpper(strings.TrimSpace(e.Method))
	var action engine.BatchAction
	switch {
	case method == http.MethodPost && id == "":
		action = engine.BatchCreate
	case method == http.MethodGet && id == "":
		action = engine.BatchList
	case method == http.MethodGet:
		action = engine.BatchGet
	case (method == http.MethodPatch || method == http.MethodPut) && id != "":
		action = engine.BatchUpdate
	case method == http.MethodPut:
		// PocketBase's upsert: the id in the body; the apply decides.
		action = engine.BatchUpsert
	case method == http.MethodDelete && id != "":
		action = engine.BatchDelete
	default:
		return "", nil, "method", fmt.Sprintf("%q does not apply to %s (create: POST, list and get: GET, update: PATCH or PUT, upsert: PUT without id, delete: DELETE)", e.Method, path)
	}
	*op = engine.BatchOp{Action: action, Collection: coll, ID: id, IfMatch: headerValue(e.Headers, "If-Match")}
	if action == engine.BatchList || action == engine.BatchGet {
		lq := listQuery(q)
		op.List = &lq
	}
	if action == engine.BatchCreate || action == engine.BatchUpdate || action == engine.BatchUpsert {
		switch b := e.Body.(type) {
		case nil:
			op.Fields = map[string]any{}
		case map[string]any:
			op.Fields = b
		default:
			// Not an object: the engine refuses it as it refuses such a
			// body on the single record routes.
			op.Body, _ = json.Marshal(b)
		}
	}
	return method, q, "", ""
}

// entryURL splits an entry's URL into path and query; ok is false for
// anything but a path with an optional query. A plain path (the common
// case: /api/v1/posts) is taken as it is, without url.Parse's
// allocations.
func entryURL(raw string) (path string, q url.Values, ok bool) {
	if plainPath(raw) {
		return raw, nil, true
	}
	u, err := url.Parse(raw)
	if err != nil || raw == "" || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.Fragment != "" {
		return "", nil, false
	}
	return u.Path, u.Query(), true
}

// recordPath splits a record URL path into collection and id (empty for
// the collection URL). /api/v1/collections/:c/records[/:id] is accepted
// too: "collections" is a reserved collection name, so it can mean nothing
// else.
func recordPath(p string) (coll, id string, ok bool) {
	var rest []string
	switch {
	case strings.HasPrefix(p, "/api/v1/collections/"):
		rest = strings.Split(strings.TrimPrefix(p, "/api/v1/collections/"), "/")
		if len(rest) < 2 || rest[1] != "records" {
			return "", "", false
		}
		rest = append(rest[:1], rest[2:]...)
	case strings.HasPrefix(p, "/api/collections/"):
		rest = strings.Split(strings.TrimPrefix(p, "/api/collections/"), "/")
		if len(rest) < 2 || rest[1] != "records" {
			return "", "", false
		}
		rest = append(rest[:1], rest[2:]...)
	case strings.HasPrefix(p, "/api/v1/"):
		rest = strings.Split(strings.TrimPrefix(p, "/api/v1/"), "/")
		if reservedRoot(rest[0]) {
			return "", "", false
		}
	default:
		return "", "", false
	}
	switch {
	case len(rest) == 1 && rest[0] != "":
		return rest[0], "", true
	case len(rest) == 2 && rest[0] != "" && rest[1] != "":
		return rest[0], rest[1], true
	}
	return "", "", false
}

// reservedRoot: first segments under /api/v1 that are never a collection
// (CONTRACT.md's reserved names).
func reservedRoot(seg string) bool {
	switch strings.ToLower(seg) {
	case "admin", "auth", "files", "batch", "realtime", "mcp", "custom", "metrics",
		"notifications", "docs", "openapi.json", "flags", "_", "collections":
		return true
	}
	return false
}

func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// plainPath: raw is a path url.Parse would return unchanged with no query
// or fragment (no escapes, no control characters).
func plainPath(raw string) bool {
	if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") {
		return false
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20, c == 0x7f, c == '?', c == '#', c == '%', c == ':':
			return false
		}
	}
	return true
}
