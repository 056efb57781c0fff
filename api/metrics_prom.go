package api

import (
	"bytes"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// The Prometheus endpoint's settings (SPEC.md's configuration table).
const (
	metricsEnabledSetting = "metrics.enabled"
	metricsTokenSetting   = "metrics.token"
)

// errMetricsToken answers a scrape without the right metrics.token.
var errMetricsToken = engine.Errorf(engine.KindUnauthorized, "A valid metrics token is required")

// httpBuckets are the upper bounds (seconds) of the request latency
// histogram: 1 ms to 10 s, the range an API answer falls in.
var httpBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// newMetricSet returns set, or a new one when nil, with the library's
// HELP and TYPE lines switched on: promtool's linter wants them. The
// switch is the library's own (a process-wide one it offers no per-set
// form of); every server sets it to the same value.
func newMetricSet(set *metrics.Set) *metrics.Set {
	metrics.ExposeMetadata(true)
	if set == nil {
		set = metrics.NewSet()
	}
	return set
}

// prometheus serves GET /api/v1/metrics: this node's figures in the
// Prometheus text format, when metrics.enabled=1 (a 404 otherwise, as
// for any unknown route), behind metrics.token when it is set.
func (s *Server) prometheus(w http.ResponseWriter, r *http.Request) {
	if s.settings.Setting(metricsEnabledSetting) != "1" {
		s.writeError(w, r, errRouteNotFound)
		return
	}
	if want := s.settings.Setting(metricsTokenSetting); want != "" && !metricsTokenOK(r, want) {
		s.writeError(w, r, errMetricsToken)
		return
	}
	var buf bytes.Buffer
	s.metrics.WritePrometheus(&buf)
	metrics.WriteProcessMetrics(&buf)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(fillHelp([]byte(libraryFixes.Replace(buf.String()))))
}

// libraryFixes correct the few Go runtime and process families the
// library names or types against Prometheus's conventions (promtool's
// linter rejects them): its cumulative process_io_*_total figures are
// typed gauge, and three go_*_count families are not histograms.
var libraryFixes = strings.NewReplacer(
	"# TYPE process_io_read_bytes_total gauge", "# TYPE process_io_read_bytes_total counter",
	"# TYPE process_io_written_bytes_total gauge", "# TYPE process_io_written_bytes_total counter",
	"# TYPE process_io_read_syscalls_total gauge", "# TYPE process_io_read_syscalls_total counter",
	"# TYPE process_io_write_syscalls_total gauge", "# TYPE process_io_write_syscalls_total counter",
	"# TYPE process_io_storage_read_bytes_total gauge", "# TYPE process_io_storage_read_bytes_total counter",
	"# TYPE process_io_storage_written_bytes_total gauge", "# TYPE process_io_storage_written_bytes_total counter",
	"go_cgo_calls_count", "go_cgo_calls_total",
	"go_gc_forced_count", "go_gc_forced_total",
	"go_cpu_count", "go_cpus",
)

// metricHelp is the HELP text of the families the library writes with
// none (its Set and Go runtime families); promtool's linter wants one.
var metricHelp = map[string]string{
	"svc_http_requests_total":           "HTTP requests answered, by route pattern, method and status.",
	"svc_http_request_duration_seconds": "Time to answer an HTTP request, by route pattern and method.",
	"svc_raft_apply_duration_seconds":   "Time the state machine took to apply one batch of log entries.",
}

// fillHelp gives every empty "# HELP name" line of text a help text:
// metricHelp's, else one naming where the figure comes from.
func fillHelp(text []byte) []byte {
	lines := bytes.Split(text, []byte("\n"))
	for i, l := range lines {
		name, ok := bytes.CutPrefix(l, []byte("# HELP "))
		if !ok || bytes.IndexByte(name, ' ') >= 0 {
			continue
		}
		help, ok := metricHelp[string(name)]
		if !ok {
			help = "Go runtime or process figure (VictoriaMetrics/metrics)."
		}
		lines[i] = append(append(l[:len(l):len(l)], ' '), help...)
	}
	return bytes.Join(lines, []byte("\n"))
}

// metricsTokenOK reports whether r carries want as a bearer token or as
// ?token=, compared in constant time.
func metricsTokenOK(r *http.Request, want string) bool {
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		got = strings.TrimSpace(h[7:])
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// countRequests records each request's count and latency by route
// pattern (chi's, so the label set stays bounded whatever paths clients
// send), method and status.
func (s *Server) countRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := s.serveCounted(next, w, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		labels := `route="` + labelValue(route) + `",method="` + metricMethod(r.Method) + `"`
		s.metrics.GetOrCreateCounter(`svc_http_requests_total{` + labels + `,status="` + strconv.Itoa(status) + `"}`).Inc()
		s.metrics.GetOrCreatePrometheusHistogramExt(`svc_http_request_duration_seconds{`+labels+`}`, httpBuckets).UpdateDuration(start)
	})
}

// serveCounted serves r and answers its status. When the request log is
// on, its recorder (the writer this middleware is handed: writeRequestLog
// runs just before) already watches the status: one recorder per request
// instead of two.
func (s *Server) serveCounted(next http.Handler, w http.ResponseWriter, r *http.Request) int {
	if cr, ok := w.(*countingRecorder); ok {
		next.ServeHTTP(w, r)
		if cr.status == 0 {
			return http.StatusOK
		}
		return cr.status
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	next.ServeHTTP(rec, r)
	return rec.status
}

// metricMethod is r's method as a label: the standard ones, or "other"
// (a client may send any token as a method).
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// labelValue escapes v for a label value of the text format.
func labelValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// Flush lets a streaming handler behind a statusRecorder flush.
func (r *statusRecorder) Flush() {
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}
