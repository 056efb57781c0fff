package stack

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"svcd/engine/queue"
	"svcd/fsm"
)

// applyBuckets are the upper bounds (seconds) of the apply latency
// histogram: one batch of log entries applied to SQLite.
var applyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// raftStates are the values svc_raft_state takes a sample for each of.
var raftStates = []string{"Follower", "Candidate", "Leader", "Shutdown"}

// newApplyTimer registers the apply latency histogram in set and returns
// the hook cluster.Config.OnApply calls with each batch's time.
func newApplyTimer(set *metrics.Set) func(entries int, took time.Duration) {
	h := set.NewPrometheusHistogramExt("svc_raft_apply_duration_seconds", applyBuckets)
	return func(_ int, took time.Duration) { h.Update(took.Seconds()) }
}

// registerFigures adds to set the node's figures below the HTTP layer:
// Raft, SQLite, realtime, queue jobs and webhook deliveries. They are read
// at each scrape (the queue and webhook counts in one read transaction).
func (s *Stack) registerFigures(set *metrics.Set, raftDir string) {
	set.RegisterMetricsWriter(func(w io.Writer) {
		st := s.Node.Stats()
		state := s.Node.State()
		samples := make([]sample, len(raftStates))
		for i, name := range raftStates {
			samples[i] = sample{fmt.Sprintf(`{state="%s"}`, strings.ToLower(name)), b2f(state == name)}
		}
		family(w, "svc_raft_state", "gauge", "1 for the Raft state this node is in.", samples...)
		family(w, "svc_raft_term", "gauge", "Current Raft term.", sample{"", float64(st.Term)})
		family(w, "svc_raft_commit_index", "gauge", "Highest log index known committed.", sample{"", float64(st.CommitIndex)})
		family(w, "svc_raft_applied_index", "gauge", "Highest log index applied to the state machine.", sample{"", float64(st.AppliedIndex)})
		family(w, "svc_raft_last_index", "gauge", "Last index in the Raft log.", sample{"", float64(st.LastIndex)})
		family(w, "svc_raft_log_bytes", "gauge", "Size of the Raft log file (raft.db).", sample{"", fileSize(filepath.Join(raftDir, "raft.db"))})
		family(w, "svc_raft_snapshots_total", "counter", "Snapshots this node persisted since it started.", sample{"", float64(st.Snapshots)})

		bs := s.Store.BatchStats()
		db := s.Store.Path()
		family(w, "svc_sqlite_transactions_total", "counter", "SQLite write transactions committed by the state machine.", sample{"", float64(bs.Batches)})
		family(w, "svc_sqlite_commands_total", "counter", "Log commands applied in those transactions.", sample{"", float64(bs.Commands)})
		family(w, "svc_sqlite_busy_errors_total", "counter", "SQLITE_BUSY or SQLITE_LOCKED answers met while applying.", sample{"", float64(s.Store.BusyErrors())})
		family(w, "svc_sqlite_wal_bytes", "gauge", "Size of the SQLite write-ahead log file.", sample{"", fileSize(db + "-wal")})
		family(w, "svc_sqlite_db_bytes", "gauge", "Size of the SQLite database file.", sample{"", fileSize(db)})

		rt := s.Realtime.Stats()
		family(w, "svc_realtime_connections", "gauge", "Open realtime connections (WebSocket and SSE).", sample{"", float64(rt.Connections)})
		family(w, "svc_realtime_subscriptions", "gauge", "Realtime subscriptions of those connections.", sample{"", float64(rt.Subscriptions)})
		family(w, "svc_realtime_dropped_total", "counter", "Realtime connections dropped for falling behind.", sample{"", float64(rt.Dropped)})

		jobs, deliveries := s.rowCounts()
		family(w, "svc_queue_jobs", "gauge", "Queue jobs by state.", jobs...)
		family(w, "svc_webhook_deliveries", "gauge", "Webhook deliveries kept, by outcome.", deliveries...)
	})
}

// deliveryOutcomes are the webhook delivery statuses (engine/webhooks'
// outbox.go), each given a sample even at zero.
var deliveryOutcomes = []string{"pending", "retrying", "succeeded", "dead"}

// rowCounts reads the queue jobs by state and the webhook deliveries by
// status in one read transaction. Every known state has a sample (0
// before the modules' migrations), so the families are always there.
func (s *Stack) rowCounts() (jobs, deliveries []sample) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	count := func(r *fsm.Reader, query string) map[string]float64 {
		out := map[string]float64{}
		rows, err := r.Query(query)
		if err != nil {
			return out
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			if rows.Scan(&k, &n) == nil {
				out[k] = float64(n)
			}
		}
		return out
	}
	var j, d map[string]float64
	_ = s.Store.View(ctx, func(r *fsm.Reader) error {
		j = count(r, `SELECT state, COUNT(*) FROM _svc_queue_jobs GROUP BY state`)
		d = count(r, `SELECT status, COUNT(*) FROM _svc_webhook_deliveries GROUP BY status`)
		return nil
	})
	return labelled("state", queue.States, j), labelled("outcome", deliveryOutcomes, d)
}

// labelled turns counts into samples labelled name: one per known value
// (0 when absent), then any other value found, in order.
func labelled(name string, known []string, counts map[string]float64) []sample {
	var out []sample
	seen := map[string]bool{}
	for _, k := range known {
		seen[k] = true
		out = append(out, sample{fmt.Sprintf(`{%s=%q}`, name, k), counts[k]})
	}
	var extra []string
	for k := range counts {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, sample{fmt.Sprintf(`{%s=%q}`, name, k), counts[k]})
	}
	return out
}

// sample is one line of a family: its labels ("" or `{k="v"}`) and value.
type sample struct {
	labels string
	value  float64
}

// family writes one metric family with its HELP and TYPE lines; nothing
// when it has no sample.
func family(w io.Writer, name, typ, help string, samples ...sample) {
	if len(samples) == 0 {
		return
	}
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	for _, s := range samples {
		fmt.Fprintf(w, "%s%s %g\n", name, s.labels, s.value)
	}
}

// fileSize is path's size in bytes (0 when it does not exist).
func fileSize(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
