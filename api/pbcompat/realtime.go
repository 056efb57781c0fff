package pbcompat

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/realtime"
)

// PocketBase's realtime (pb:apis/realtime.go): GET /api/realtime opens an
// SSE stream whose first event is PB_CONNECT {clientId}; POST
// /api/realtime {clientId, subscriptions} sets the client's subscriptions
// (the whole set each time) and answers 204. Events are named by the
// subscription string, options included, and carry {action, record}.
// Every frame's id is the client id (the SDK reads it from PB_CONNECT's
// lastEventId). The streams are svcd's realtime hub's connections, so the
// rules, the credential checks and the replay ring are svcd's.

// RealtimeNode is what the realtime routes need from api beyond the hub.
type RealtimeNode interface {
	// Conn is the credential a stream opened by r holds and its options
	// (what records are read as, the credential mark); IDPrefix is filled
	// by the layer.
	Conn(r *http.Request) (engine.Principal, realtime.ConnOptions)
	// KeepAlive is how often an idle stream gets a comment line.
	KeepAlive() time.Duration
	// Forward sends a subscription POST whose client id names another
	// member's stream to that member and writes its answer; false when no
	// member has that prefix (the caller answers 404).
	Forward(w http.ResponseWriter, r *http.Request, prefix string, body []byte) bool
}

// ForwardedHeader marks a subscription POST one member forwarded to
// another: the owner answers it and never forwards it again.
const ForwardedHeader = "X-Svc-Realtime-Forwarded"

// Messages of the realtime routes (pb:apis/realtime.go).
const (
	MsgRealtimeClient   = "Missing or invalid client id."
	MsgRealtimeAuthDiff = "The current and the previous request authorization don't match."
)

// maxSubscriptionLen and maxSubscriptions are PocketBase's form limits.
const (
	maxSubscriptionLen = 2500
	maxSubscriptions   = 1000
)

// mountRealtime registers GET and POST /api/realtime.
func mountRealtime(r chi.Router, d *Deps) {
	if d.Realtime == nil {
		return
	}
	r.Get("/api/realtime", d.realtimeStream)
	r.Post("/api/realtime", d.realtimeSubscribe)
}

// realtimeStream serves GET /api/realtime.
func (d *Deps) realtimeStream(w http.ResponseWriter, r *http.Request) {
	cred, opts := Principal(r), realtime.ConnOptions{}
	if d.RealtimeNode != nil {
		cred, opts = d.RealtimeNode.Conn(r)
	}
	opts.IDPrefix = realtime.NodePrefix(d.NodeID)
	// The SDK reconnects on its own; a revoked credential ends the stream
	// like svcd's, and the next one subscribes with the token it has.
	opts.CloseOnRevoke = true
	conn := d.Realtime.ConnectWith(cred, opts)
	defer conn.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := newPBStream(w, conn.ID())
	defer st.finish()
	connect, _ := json.Marshal(map[string]string{"clientId": conn.ID()})
	if st.event("PB_CONNECT", connect) != nil {
		return
	}
	conn.Start()
	ctx, cancel := context.WithCancel(r.Context())
	keep := 25 * time.Second
	if d.RealtimeNode != nil && d.RealtimeNode.KeepAlive() > 0 {
		keep = d.RealtimeNode.KeepAlive()
	}
	pinged := make(chan struct{})
	defer func() {
		cancel()
		st.finish()
		<-pinged
	}()
	go st.keepAlive(ctx, cancel, keep, pinged)
	for {
		msgs, err := conn.Next(ctx)
		if err != nil {
			return // slow consumer, revoked credential, or gone: the SDK reconnects
		}
		for _, m := range msgs {
			if m.Label == "" {
				continue // notices (resync, unauthorized): PocketBase has none
			}
			data, err := d.realtimeData(ctx, conn, m)
			if err != nil {
				continue
			}
			if st.event(m.Label, data) != nil {
				return
			}
		}
	}
}

// realtimeData is an event's data: {action, record}, the record in
// PocketBase's shape with the subscription's expand and fields.
func (d *Deps) realtimeData(ctx context.Context, conn *realtime.Conn, m realtime.Message) ([]byte, error) {
	_, opts := parseSubscription(m.Label)
	raw := []byte(m.Record)
	viewer := conn.Principal()
	if opts.Expand != "" && m.Type != "delete" && d.Records != nil {
		// Expand reads the record's relations now, as the subscriber.
		if rec, err := d.Records.GetRecord(ctx, viewer, m.Collection, m.ID, "", opts.Expand); err == nil {
			raw = rec.JSON
		}
	}
	c, err := d.Catalog.Collection(m.Collection)
	if err != nil {
		return nil, err
	}
	rec, err := RecordOut(d.Catalog, c, raw, viewer)
	if err != nil {
		return nil, err
	}
	if f := Fields(opts.Fields); f != "" {
		rec = pickFields(rec, f)
	}
	return json.Marshal(map[string]any{"action": m.Type, "record": rec})
}

// pickFields keeps the top-level members fields names (expand.* keeps
// the whole expand).
func pickFields(rec map[string]any, fields string) map[string]any {
	out := map[string]any{}
	for _, f := range strings.Split(fields, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(f), ".")
		if v, ok := rec[name]; ok {
			out[name] = v
		}
	}
	return out
}

// subscriptionOptions are the query options the SDK appends to a topic
// (?options={"query":{...},"headers":{...}}).
type subscriptionOptions struct {
	Filter, Expand, Fields string
}

// parseSubscription splits a subscription string into svcd's topic and
// its options: "posts/*" is the topic posts, "posts/ID" is posts/ID.
// The topic is "" for a form svcd has no topic for.
func parseSubscription(s string) (string, subscriptionOptions) {
	var opts subscriptionOptions
	base, query, _ := strings.Cut(s, "?")
	if query != "" {
		if q, err := url.ParseQuery(query); err == nil && q.Get("options") != "" {
			var raw struct {
				Query map[string]any `json:"query"`
			}
			if json.Unmarshal([]byte(q.Get("options")), &raw) == nil {
				opts.Filter = optString(raw.Query["filter"])
				opts.Expand = optString(raw.Query["expand"])
				opts.Fields = optString(raw.Query["fields"])
			}
		}
	}
	coll, id, ok := strings.Cut(base, "/")
	if !ok || coll == "" || id == "" {
		return "", opts
	}
	if id == "*" {
		return coll, opts
	}
	return coll + "/" + id, opts
}

// optString is an option's value as text (the SDK sends strings).
func optString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// realtimeForm is POST /api/realtime's body.
type realtimeForm struct {
	ClientID      string   `json:"clientId"`
	Subscriptions []string `json:"subscriptions"`
}

// realtimeSubscribe serves POST /api/realtime.
func (d *Deps) realtimeSubscribe(w http.ResponseWriter, r *http.Request) {
	body, err := d.readBody(w, r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var form realtimeForm
	if json.Unmarshal(body, &form) != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, "", nil))
		return
	}
	if e := form.validate(); e != nil {
		WriteError(w, r, e)
		return
	}
	conn := d.Realtime.Lookup(form.ClientID)
	if conn == nil {
		prefix := ""
		if len(form.ClientID) > realtime.NodePrefixLen {
			prefix = form.ClientID[:realtime.NodePrefixLen]
		}
		own := realtime.NodePrefix(d.NodeID)
		if prefix != "" && prefix != own && r.Header.Get(ForwardedHeader) == "" &&
			d.RealtimeNode != nil && d.RealtimeNode.Forward(w, r, prefix, body) {
			return
		}
		WriteError(w, r, NewError(http.StatusNotFound, MsgRealtimeClient, nil))
		return
	}
	p, held := Principal(r), conn.Credential()
	if held.Kind != engine.Anonymous && (held.Kind != p.Kind || held.ID != p.ID) {
		WriteError(w, r, NewError(http.StatusForbidden, MsgRealtimeAuthDiff, nil))
		return
	}
	if p.Kind != held.Kind {
		// A guest stream takes the POST's caller (the SDK's EventSource
		// sends no Authorization; its POSTs do).
		var mark realtime.AuthMark
		if d.RealtimeNode != nil {
			var opts realtime.ConnOptions
			p, opts = d.RealtimeNode.Conn(r)
			mark = opts.Mark
		}
		conn.SetPrincipal(p, mark)
	}
	subs := make([]realtime.LabelledSub, 0, len(form.Subscriptions))
	for _, s := range form.Subscriptions {
		topic, opts := parseSubscription(s)
		c := d.topicCollection(topic)
		if c == nil {
			continue // PocketBase accepts topics nothing publishes to
		}
		filter, e := d.clientFilter(c, opts.Filter)
		if e != nil {
			WriteError(w, r, e)
			return
		}
		subs = append(subs, realtime.LabelledSub{Label: s, Topic: topic, Filter: filter})
	}
	if e := conn.ReplaceLabelled(subs); e != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, e.Message, nil))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// topicCollection is topic's collection (nil when there is none; an
// empty topic has none).
func (d *Deps) topicCollection(topic string) *schema.Collection {
	coll, _, _ := strings.Cut(topic, "/")
	if coll == "" {
		return nil
	}
	c, err := d.Catalog.Collection(coll)
	if err != nil {
		return nil
	}
	return c
}

// validate checks the form as PocketBase does (clientId required, at most
// 1000 subscriptions of at most 2500 characters).
func (f *realtimeForm) validate() *Error {
	switch {
	case f.ClientID == "":
		return NewError(http.StatusBadRequest, MsgValidation, map[string]any{
			"clientId": FieldError{Code: "validation_required", Message: "Cannot be blank."}})
	case len(f.Subscriptions) > maxSubscriptions:
		return NewError(http.StatusBadRequest, MsgValidation, map[string]any{
			"subscriptions": FieldError{Code: "validation_length_too_long", Message: "The length must be no more than 1000."}})
	}
	for i, s := range f.Subscriptions {
		if len(s) > maxSubscriptionLen {
			return NewError(http.StatusBadRequest, MsgValidation, map[string]any{
				"subscriptions": map[string]any{strconv.Itoa(i): FieldError{Code: "validation_length_too_long", Message: "The length must be no more than 2500."}}})
		}
	}
	return nil
}

// readBody reads r's body with api's reader (its limits), or plainly.
func (d *Deps) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if d.ReadBody != nil {
		return d.ReadBody(w, r)
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
}
