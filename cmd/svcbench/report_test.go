package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFormatLatency(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{500 * time.Nanosecond, "500ns"},
		{time.Microsecond, "1µs"},
		{85200 * time.Nanosecond, "85.2µs"},
		{850 * time.Microsecond, "850µs"},
		{999700 * time.Nanosecond, "1ms"},
		{1520 * time.Microsecond, "1.52ms"},
		{3100 * time.Microsecond, "3.1ms"},
		{4912 * time.Microsecond, "4.91ms"},
		{22 * time.Millisecond, "22ms"},
		{22040 * time.Microsecond, "22ms"},
		{150 * time.Millisecond, "150ms"},
		{1200 * time.Millisecond, "1.2s"},
		{75 * time.Second, "75s"},
		{2500 * time.Second, "2500s"},
	}
	for _, c := range cases {
		if got := formatLatency(c.d); got != c.want {
			t.Errorf("formatLatency(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func sampleResult() Result {
	return Result{
		Scenario: "create",
		Clients:  16,
		Nodes:    1,
		Elapsed:  10*time.Second + 20*time.Millisecond,
		Requests: 93012,
		Errors:   0,
		RPS:      9301.2,
		Latency: Summary{
			Count: 93012,
			Mean:  1700 * time.Microsecond,
			P50:   1520 * time.Microsecond,
			P95:   3100 * time.Microsecond,
			P99:   4900 * time.Microsecond,
			Max:   22 * time.Millisecond,
		},
		Server: ServerFigures{
			CPUPerReqMicros: f64(96.04),
			CmdsPerTxn:      f64(12.44),
			BatchCmdsP50:    f64(11),
			BatchCmdsP99:    f64(31),
		},
	}
}

func TestFormatLine(t *testing.T) {
	r := sampleResult()
	want := "create  clients=16  dur=10.0s  reqs=93012  rps=9301  p50=1.52ms p95=3.1ms p99=4.9ms max=22ms  errors=0  cpu/req=96µs  cmds/txn=12.4 (p50 11)"
	if got := formatLine(r); got != want {
		t.Errorf("formatLine:\n got %q\nwant %q", got, want)
	}

	// Without server metrics the server figures disappear; short names pad.
	r.Scenario, r.Errors, r.Server = "get", 3, ServerFigures{}
	want = "get     clients=16  dur=10.0s  reqs=93012  rps=9301  p50=1.52ms p95=3.1ms p99=4.9ms max=22ms  errors=3"
	if got := formatLine(r); got != want {
		t.Errorf("formatLine without metrics:\n got %q\nwant %q", got, want)
	}

	// cpu only (no writes in the window), and a fractional batch p50.
	r.Server = ServerFigures{CPUPerReqMicros: f64(1234.4), BatchCmdsP50: f64(2)}
	if got := formatLine(r); !strings.HasSuffix(got, "errors=3  cpu/req=1234µs") {
		t.Errorf("formatLine cpu only: %q", got)
	}
	r.Server = ServerFigures{CmdsPerTxn: f64(3), BatchCmdsP50: f64(2.5)}
	if got := formatLine(r); !strings.HasSuffix(got, "errors=3  cmds/txn=3.0 (p50 2.5)") {
		t.Errorf("formatLine cmds only: %q", got)
	}
}

func TestFormatJSONAndWriteResult(t *testing.T) {
	r := sampleResult()
	r.ErrorSamples = []string{"POST /api/v1/x: HTTP 500: boom"}
	var out, log bytes.Buffer
	if err := writeResult(&out, &log, r, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want table + JSON line, got %q", out.String())
	}
	if lines[0] != formatLine(r) {
		t.Errorf("first line %q is not the table line", lines[0])
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &j); err != nil {
		t.Fatalf("JSON line %q: %v", lines[1], err)
	}
	checks := map[string]float64{
		"requests": 93012, "errors": 0, "clients": 16, "rps": 9301.2,
		"p50_ms": 1.52, "p95_ms": 3.1, "p99_ms": 4.9, "max_ms": 22, "mean_ms": 1.7,
		"duration_s": 10.02, "cpu_per_req_us": 96.04, "cmds_per_txn": 12.44,
		"fsm_batch_commands_p50": 11, "fsm_batch_commands_p99": 31,
		"nodes": 1, "precondition_failed": 0,
	}
	for k, want := range checks {
		got, ok := j[k].(float64)
		if !ok || got < want-1e-9 || got > want+1e-9 {
			t.Errorf("JSON %s = %v, want %v", k, j[k], want)
		}
	}
	if j["scenario"] != "create" {
		t.Errorf("JSON scenario = %v", j["scenario"])
	}
	if !strings.Contains(log.String(), "HTTP 500: boom") {
		t.Errorf("error samples not printed: %q", log.String())
	}

	// Without --json only the table line; missing server figures are omitted.
	r.Server = ServerFigures{}
	out.Reset()
	if err := writeResult(&out, &log, r, false); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 1 || strings.Contains(out.String(), "{") {
		t.Errorf("non-JSON output: %q", out.String())
	}
	b, err := formatJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "cpu_per_req_us") || strings.Contains(string(b), "cmds_per_txn") {
		t.Errorf("absent figures should be omitted: %s", b)
	}
}
