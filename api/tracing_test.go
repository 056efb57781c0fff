package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"svcd/api/apitest"
)

// otlpSpan is one received span with its resource's attributes.
type otlpSpan struct {
	span    ptrace.Span
	service string
	node    string
}

// otlpReceiver is a local OTLP/HTTP JSON collector: it decodes each post
// with the collector's protocol package and keeps the spans and headers.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []otlpSpan
	headers []http.Header
	paths   []string
	errs    []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		err := req.UnmarshalJSON(body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.headers = append(rc.headers, r.Header.Clone())
		rc.paths = append(rc.paths, r.URL.Path)
		if err != nil {
			rc.errs = append(rc.errs, err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rss := req.Traces().ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			node, _ := rs.Resource().Attributes().Get("svc.node_id")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				sp := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					rc.spans = append(rc.spans, otlpSpan{sp.At(k), svc.AsString(), node.AsString()})
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

// trace waits until the spans of traceID include every name in want.
func (rc *otlpReceiver) trace(t *testing.T, traceID string, want ...string) map[string]otlpSpan {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := map[string]otlpSpan{}
		rc.mu.Lock()
		for _, s := range rc.spans {
			if s.span.TraceID().String() == traceID {
				got[s.span.Name()] = s
			}
		}
		errs := rc.errs
		rc.mu.Unlock()
		if len(errs) > 0 {
			t.Fatalf("undecodable OTLP posts: %v", errs)
		}
		missing := ""
		for _, w := range want {
			if _, ok := got[w]; !ok {
				missing = w
			}
		}
		if missing == "" {
			return got
		}
		if time.Now().After(deadline) {
			names := []string{}
			for n := range got {
				names = append(names, n)
			}
			t.Fatalf("trace %s: no span %q; got %v", traceID, missing, names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (rc *otlpReceiver) count(traceID string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, s := range rc.spans {
		if s.span.TraceID().String() == traceID {
			n++
		}
	}
	return n
}

func strAttr(s ptrace.Span, k string) string {
	v, _ := s.Attributes().Get(k)
	return v.AsString()
}

// TestTracesExport: with otel.endpoint set, a request's root span (a
// child of the client's traceparent, named after its route, with route and
// status) and its phase spans reach the collector as OTLP JSON under the
// service name, with the configured headers; clearing the endpoint stops
// the export at once.
func TestTracesExport(t *testing.T) {
	t.Parallel()
	rc := startOTLPReceiver(t)
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{
		"otel.endpoint": rc.URL, "otel.service_name": "svc-test", "otel.headers": "x-api-key=k1, x-team=ops",
	})
	// The headers carry the collector's credentials: masked in listings.
	if got := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/settings", nil)["data"])["otel.headers"]; got != "********" {
		t.Errorf("otel.headers listed as %v, want it masked", got)
	}
	const tid, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	h := s.AdminHeaders(t, map[string]string{"traceparent": "00-" + tid + "-" + parent + "-01"})
	if res, body := s.Do(t, "GET", "/api/v1/admin/collections", nil, h); res.StatusCode != http.StatusOK {
		t.Fatalf("list collections: %d %s", res.StatusCode, body)
	}
	got := rc.trace(t, tid, "GET /api/v1/admin/collections", "auth", "response")
	root := got["GET /api/v1/admin/collections"]
	if root.span.ParentSpanID().String() != parent {
		t.Errorf("root span's parent = %s, want the traceparent's %s", root.span.ParentSpanID(), parent)
	}
	if r := strAttr(root.span, "http.route"); r != "/api/v1/admin/collections" {
		t.Errorf("http.route = %q", r)
	}
	if st, _ := root.span.Attributes().Get("http.response.status_code"); st.Int() != 200 {
		t.Errorf("status attribute = %v", st.AsRaw())
	}
	if root.span.Kind() != ptrace.SpanKindServer {
		t.Errorf("root span kind = %v", root.span.Kind())
	}
	if root.service != "svc-test" || root.node != s.Stack.Node.NodeID() {
		t.Errorf("resource: service %q node %q", root.service, root.node)
	}
	for _, ph := range []string{"auth", "response"} {
		if p := got[ph].span.ParentSpanID(); p != root.span.SpanID() {
			t.Errorf("%s span's parent = %s, want the root %s", ph, p, root.span.SpanID())
		}
	}
	rc.mu.Lock()
	hdr, path := rc.headers[0], rc.paths[0]
	rc.mu.Unlock()
	if hdr.Get("Content-Type") != "application/json" || hdr.Get("X-Api-Key") != "k1" || hdr.Get("X-Team") != "ops" || path != "/v1/traces" {
		t.Errorf("post to %s with headers %v", path, hdr)
	}

	// Cleared: the next request makes no span.
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"otel.endpoint": ""})
	const off = "5bf92f3577b34da6a3ce929d0e0e4737"
	h = s.AdminHeaders(t, map[string]string{"traceparent": "00-" + off + "-" + parent + "-01"})
	s.Do(t, "GET", "/api/v1/admin/collections", nil, h)
	time.Sleep(2500 * time.Millisecond) // over the batch timeout
	if n := rc.count(off); n != 0 {
		t.Errorf("%d spans exported after otel.endpoint was cleared", n)
	}
}

// TestTracesUnreachableCollector: a collector that refuses connections
// slows no request and fails none.
func TestTracesUnreachableCollector(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"otel.endpoint": url})
	h := s.AdminHeaders(t, nil)
	start := time.Now()
	for i := 0; i < 50; i++ {
		if res, body := s.Do(t, "GET", "/api/v1/admin/collections", nil, h); res.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, res.StatusCode, body)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("50 requests took %v with the collector down", d)
	}
}

// TestTracesFollowerWrite: a write sent to a follower makes one trace:
// the follower's root, propose and forward spans, then the leader's
// leader.apply span under the forward span and, under it, the Raft commit
// and the state machine's apply as two spans, one after the other, each
// with its node's id in the resource.
func TestTracesFollowerWrite(t *testing.T) {
	t.Parallel()
	rc := startOTLPReceiver(t)
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	leader.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}))
	leader.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"otel.endpoint": rc.URL})
	c.Sync(t)
	fol := c.Followers(t)[0]
	const tid = "6bf92f3577b34da6a3ce929d0e0e4738"
	h := fol.AdminHeaders(t, map[string]string{"traceparent": "00-" + tid + "-00f067aa0ba902b7-01"})
	if res, body := fol.Do(t, "POST", "/api/v1/notes", map[string]any{"title": "traced"}, h); res.StatusCode != http.StatusCreated {
		t.Fatalf("write on the follower: %d %s", res.StatusCode, body)
	}
	got := rc.trace(t, tid, "POST /api/v1/{collection}", "propose", "forward", "leader.apply", "raft.commit", "apply")
	root, prop, fwd, lead, commit, apply := got["POST /api/v1/{collection}"], got["propose"], got["forward"], got["leader.apply"], got["raft.commit"], got["apply"]
	fid, lid := fol.Stack.Node.NodeID(), leader.Stack.Node.NodeID()
	for name, sp := range map[string]otlpSpan{"root": root, "propose": prop, "forward": fwd} {
		if sp.node != fid {
			t.Errorf("%s span from node %q, want the follower %q", name, sp.node, fid)
		}
	}
	for name, sp := range map[string]otlpSpan{"leader.apply": lead, "raft.commit": commit, "apply": apply} {
		if sp.node != lid {
			t.Errorf("%s span from node %q, want the leader %q", name, sp.node, lid)
		}
	}
	if commit.span.EndTimestamp() > apply.span.StartTimestamp() || apply.span.StartTimestamp() > apply.span.EndTimestamp() {
		t.Errorf("commit %v-%v and apply %v-%v overlap or run backwards", commit.span.StartTimestamp(), commit.span.EndTimestamp(),
			apply.span.StartTimestamp(), apply.span.EndTimestamp())
	}
	links := [][2]otlpSpan{{root, prop}, {prop, fwd}, {fwd, lead}, {lead, commit}, {lead, apply}}
	for _, l := range links {
		if l[1].span.ParentSpanID() != l[0].span.SpanID() {
			t.Errorf("%s's parent is %s, want %s (%s)", l[1].span.Name(), l[1].span.ParentSpanID(), l[0].span.Name(), l[0].span.SpanID())
		}
	}
}

// TestTracesStreaming: with tracing on, a realtime stream (whose request
// span lasts as long as the connection) still flushes its frames.
func TestTracesStreaming(t *testing.T) {
	t.Parallel()
	rc := startOTLPReceiver(t)
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"otel.endpoint": rc.URL})
	openSSE(t, s, "", nil) // fails unless the connect frame arrives
}
