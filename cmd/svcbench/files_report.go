package main

import (
	"fmt"
	"strings"
)

// formatBigLine renders an upload-big result as one table line: the file,
// its time and MB/s, the server's CPU seconds, and its memory before,
// at the highest reading during, after, and its lifetime peak (VmHWM).
func formatBigLine(r Result) string {
	g := r.Big
	var b strings.Builder
	fmt.Fprintf(&b, "%s  size=%s  dur=%.1fs  MB/s=%s", r.Scenario, formatSize(g.Size), r.Elapsed.Seconds(), sig3(r.MBPS))
	if v := r.Server.CPUSeconds; v != nil {
		fmt.Fprintf(&b, "  cpu=%ss", sig3(*v))
	}
	if g.PID == 0 {
		b.WriteString("  rss=unknown (no --pid)")
		return b.String()
	}
	fmt.Fprintf(&b, "  rss-before=%s  rss-peak=%s (%s)  rss-after=%s  vmhwm=%s  samples=%d",
		formatKiB(g.BeforeKiB), formatKiB(g.PeakKiB), signedKiB(g.PeakKiB-g.BeforeKiB),
		formatKiB(g.AfterKiB), formatKiB(g.HWMKiB), g.Samples)
	return b.String()
}

// signedKiB renders a KiB difference in MiB with its sign.
func signedKiB(kib int64) string {
	if kib < 0 {
		return "-" + formatKiB(-kib)
	}
	return "+" + formatKiB(kib)
}

// jsonBig is the upload-big part of a --json line.
type jsonBig struct {
	PID          int      `json:"pid,omitempty"`
	Samples      int      `json:"rss_samples"`
	BeforeKiB    int64    `json:"rss_before_kib,omitempty"`
	PeakKiB      int64    `json:"rss_peak_kib,omitempty"`
	AfterKiB     int64    `json:"rss_after_kib,omitempty"`
	HWMKiB       int64    `json:"vmhwm_kib,omitempty"`
	ServerCPUSec *float64 `json:"server_cpu_s,omitempty"`
}

func bigJSON(r Result) *jsonBig {
	g := r.Big
	if g == nil {
		return nil
	}
	return &jsonBig{PID: g.PID, Samples: g.Samples, BeforeKiB: g.BeforeKiB, PeakKiB: g.PeakKiB,
		AfterKiB: g.AfterKiB, HWMKiB: g.HWMKiB, ServerCPUSec: r.Server.CPUSeconds}
}
