package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Result is the outcome of one scenario.
type Result struct {
	Scenario     string
	Clients      int
	Nodes        int           // nodes the requests went to
	Spread       bool          // each client spread its requests over the nodes
	Elapsed      time.Duration // wall time of the measured phase
	Requests     int64
	Errors       int64
	Precond      int64 // 412 answers (failed If-Match), not in Errors
	RPS          float64
	Latency      Summary
	Server       ServerFigures
	ErrorSamples []string
	Fanout       *FanoutFigures // fan-out scenarios only
	// Rows are the records written by the successful requests of a bulk
	// scenario (batch, ingest), RowsPS per second of Elapsed.
	Rows   int64
	RowsPS float64
	// File scenarios (files.go): the size of each file, the file bytes
	// moved by the successful requests and their MB/s (10^6 bytes per
	// second of Elapsed); Big holds upload-big's memory figures.
	FileSize int64
	Bytes    int64
	MBPS     float64
	Big      *BigUpload
}

// formatLine renders a result as one human-readable table line.
func formatLine(r Result) string {
	if r.Fanout != nil {
		return formatFanoutLine(r)
	}
	if r.Big != nil {
		return formatBigLine(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s  clients=%d", r.Scenario, r.Clients)
	if r.Nodes > 1 {
		mode := "pinned"
		if r.Spread {
			mode = "spread"
		}
		fmt.Fprintf(&b, "  nodes=%d %s", r.Nodes, mode)
	}
	fmt.Fprintf(&b, "  dur=%.1fs  reqs=%d  rps=%.0f  p50=%s p95=%s p99=%s max=%s  errors=%d",
		r.Elapsed.Seconds(), r.Requests, r.RPS,
		formatLatency(r.Latency.P50), formatLatency(r.Latency.P95),
		formatLatency(r.Latency.P99), formatLatency(r.Latency.Max), r.Errors)
	switch {
	case r.Scenario == scQueue:
		fmt.Fprintf(&b, "  jobs=%d  jobs/s=%.0f", r.Rows, r.RowsPS)
	case r.Rows > 0:
		fmt.Fprintf(&b, "  rows=%d  rows/s=%.0f", r.Rows, r.RowsPS)
	}
	if r.FileSize > 0 {
		fmt.Fprintf(&b, "  size=%s  MB/s=%s", formatSize(r.FileSize), sig3(r.MBPS))
	}
	if r.Scenario == scCAS || r.Precond > 0 {
		fmt.Fprintf(&b, "  412s=%d", r.Precond)
	}
	if v := r.Server.CPUPerReqMicros; v != nil {
		fmt.Fprintf(&b, "  cpu/req=%sµs", sig3(*v))
	}
	if v := r.cpuPerRow(); v != nil {
		unit := "row"
		if r.Scenario == scQueue {
			unit = "job"
		}
		fmt.Fprintf(&b, "  cpu/%s=%sµs", unit, sig3(*v))
	}
	if v := r.Server.CmdsPerTxn; v != nil {
		fmt.Fprintf(&b, "  cmds/txn=%.1f", *v)
		if p := r.Server.BatchCmdsP50; p != nil {
			fmt.Fprintf(&b, " (p50 %s)", trimFloat(*p, 1))
		}
	}
	return b.String()
}

// jsonResult is the --json form of a Result; latencies are milliseconds.
type jsonResult struct {
	Scenario        string      `json:"scenario"`
	Clients         int         `json:"clients"`
	Nodes           int         `json:"nodes"`
	Spread          bool        `json:"spread"`
	DurationSec     float64     `json:"duration_s"`
	Requests        int64       `json:"requests"`
	Errors          int64       `json:"errors"`
	Precond         int64       `json:"precondition_failed"`
	RPS             float64     `json:"rps"`
	MeanMs          float64     `json:"mean_ms"`
	P50Ms           float64     `json:"p50_ms"`
	P95Ms           float64     `json:"p95_ms"`
	P99Ms           float64     `json:"p99_ms"`
	MaxMs           float64     `json:"max_ms"`
	CPUPerReqMicros *float64    `json:"cpu_per_req_us,omitempty"`
	CPUPerRowMicros *float64    `json:"cpu_per_row_us,omitempty"`
	CmdsPerTxn      *float64    `json:"cmds_per_txn,omitempty"`
	BatchCmdsP50    *float64    `json:"fsm_batch_commands_p50,omitempty"`
	BatchCmdsP99    *float64    `json:"fsm_batch_commands_p99,omitempty"`
	Fanout          *jsonFanout `json:"fanout,omitempty"`
	Rows            int64       `json:"rows,omitempty"`
	RowsPS          float64     `json:"rows_per_s,omitempty"`
	FileSize        int64       `json:"file_size,omitempty"`
	Bytes           int64       `json:"bytes,omitempty"`
	MBPS            float64     `json:"mb_per_s,omitempty"`
	Big             *jsonBig    `json:"upload_big,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// formatJSON renders a result as one JSON line (no trailing newline).
func formatJSON(r Result) ([]byte, error) {
	return json.Marshal(jsonResult{
		Scenario:        r.Scenario,
		Clients:         r.Clients,
		Nodes:           r.Nodes,
		Spread:          r.Spread,
		DurationSec:     r.Elapsed.Seconds(),
		Requests:        r.Requests,
		Errors:          r.Errors,
		Precond:         r.Precond,
		RPS:             r.RPS,
		MeanMs:          ms(r.Latency.Mean),
		P50Ms:           ms(r.Latency.P50),
		P95Ms:           ms(r.Latency.P95),
		P99Ms:           ms(r.Latency.P99),
		MaxMs:           ms(r.Latency.Max),
		CPUPerReqMicros: r.Server.CPUPerReqMicros,
		CPUPerRowMicros: r.cpuPerRow(),
		CmdsPerTxn:      r.Server.CmdsPerTxn,
		BatchCmdsP50:    r.Server.BatchCmdsP50,
		BatchCmdsP99:    r.Server.BatchCmdsP99,
		Fanout:          fanoutJSON(r.Fanout),
		Rows:            r.Rows,
		RowsPS:          r.RowsPS,
		FileSize:        r.FileSize,
		Bytes:           r.Bytes,
		MBPS:            r.MBPS,
		Big:             bigJSON(r),
	})
}

// writeResult prints the table line (and JSON line when asJSON) to out and
// the error samples to log.
func writeResult(out, log io.Writer, r Result, asJSON bool) error {
	if _, err := fmt.Fprintln(out, formatLine(r)); err != nil {
		return err
	}
	if asJSON {
		b, err := formatJSON(r)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
			return err
		}
	}
	if len(r.ErrorSamples) > 0 {
		fmt.Fprintf(log, "%s: first errors:\n", r.Scenario)
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(log, "  %s\n", s)
		}
	}
	return nil
}

// formatLatency renders d with about three significant digits in the
// largest unit that keeps the number >= 1: 850µs, 1.52ms, 22ms, 1.2s.
func formatLatency(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	if d < time.Microsecond {
		return strconv.FormatInt(int64(d), 10) + "ns"
	}
	units := []struct {
		size time.Duration
		name string
	}{{time.Microsecond, "µs"}, {time.Millisecond, "ms"}, {time.Second, "s"}}
	for i, u := range units {
		v := float64(d) / float64(u.size)
		s := sig3(v)
		// Move up a unit when rounding reaches 1000 (e.g. 999.7µs → 1ms).
		if i < len(units)-1 && (v >= 1000 || s == "1000") {
			continue
		}
		return s + u.name
	}
	return "?" // unreachable
}

// sig3 formats v with three significant digits (no exponent, trailing
// zeros trimmed); values >= 100 are rounded to integers.
func sig3(v float64) string {
	switch {
	case v >= 99.95:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 9.995:
		return trimFloat(v, 1)
	default:
		return trimFloat(v, 2)
	}
}

// trimFloat formats v with at most prec decimals, dropping trailing zeros.
func trimFloat(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// cpuPerRow is the server's CPU time per record written, for scenarios
// that write rows in bulk (batch, ingest); nil otherwise or when unknown.
func (r Result) cpuPerRow() *float64 {
	if r.Rows <= 0 || r.Server.CPUSeconds == nil {
		return nil
	}
	v := *r.Server.CPUSeconds * 1e6 / float64(r.Rows)
	return &v
}
