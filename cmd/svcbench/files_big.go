package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// rssEvery is how often upload-big reads the server's VmRSS.
const rssEvery = 20 * time.Millisecond

// BigUpload are the figures of upload-big: one file streamed to the first
// node while its memory is sampled. The memory figures are zero when the
// server process is not visible here (no --pid and not on this host).
type BigUpload struct {
	Size      int64
	PID       int
	Samples   int   // VmRSS readings during the upload
	BeforeKiB int64 // VmRSS before the upload
	PeakKiB   int64 // highest VmRSS read during the upload
	AfterKiB  int64 // VmRSS once the upload was answered
	HWMKiB    int64 // VmHWM (the process's peak since it started) after
}

// runUploadBig uploads one file of --file-size (default 1GB) to the first
// node, generated while it is sent, and reports its time, MB/s and the
// server's memory around it.
func runUploadBig(ctx context.Context, env scenarioEnv, cfg config, log io.Writer) (Result, error) {
	size := fileSizeFor(cfg, scUploadBig)
	api, base := env.api, env.nodes.bases[0]
	r := Result{Scenario: scUploadBig, Clients: 1, Nodes: 1}
	big := &BigUpload{Size: size}
	r.Big = big

	ids, _, err := createFileRecords(ctx, api, env.filesColl, 1)
	if err != nil {
		return r, err
	}
	pid, err := serverPID(ctx, api, cfg.pid)
	if err != nil {
		fmt.Fprintf(log, "note: %v; server memory not reported\n", err)
		pid = 0
	}
	big.PID = pid
	var sampler *rssSampler
	if pid > 0 {
		if big.BeforeKiB, err = readRSS(pid); err != nil {
			return r, err
		}
		sampler = startRSSSampler(pid, rssEvery)
	}
	fmt.Fprintf(log, "%s: streaming %s to %s\n", scUploadBig, formatSize(size), base)
	before := api.nodeMetrics(ctx, []string{base})
	start := time.Now()
	_, _, upErr := api.uploadStream(ctx, base, env.filesColl, ids[0], size, 7)
	r.Elapsed = time.Since(start)
	if sampler != nil {
		big.PeakKiB, big.Samples = sampler.stop()
		big.AfterKiB, _ = readRSS(pid)
		big.HWMKiB, _ = readStatusKiB(pid, "VmHWM:")
	}
	if upErr != nil {
		return r, upErr
	}
	after := api.nodeMetrics(ctx, []string{base})
	r.Requests = 1
	r.Latency = summarize([]time.Duration{r.Elapsed})
	r.RPS = 1 / r.Elapsed.Seconds()
	r.Bytes, r.FileSize = size, size
	r.MBPS = float64(size) / 1e6 / r.Elapsed.Seconds()
	r.Server = nodesDelta(before, after, 1)
	r.Server.CPUPerReqMicros = nil // the CPU seconds say it better
	return r, nil
}

// rssSampler reads a process's VmRSS at a fixed interval and keeps the
// highest value.
type rssSampler struct {
	done    chan struct{}
	wg      sync.WaitGroup
	peak    int64
	samples int
}

func startRSSSampler(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if kib, err := readRSS(pid); err == nil {
				s.samples++
				s.peak = max(s.peak, kib)
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// stop ends the sampling and returns the peak
// VmRSS in KiB and the number of readings.
func (s *rssSampler) stop() (peakKiB int64, samples int) {
	close(s.done)
	s.wg.Wait()
	return s.peak, s.samples
}
