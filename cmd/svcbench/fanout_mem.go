package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// serverPID is --pid, else the pid GET /api/v1/_/metrics reports when
// /proc shows that process here (same host, same pid namespace).
func serverPID(ctx context.Context, api *apiClient, flagPID int) (int, error) {
	if flagPID > 0 {
		return flagPID, nil
	}
	m := api.metrics(ctx, api.base)
	if m == nil || m.PID == nil {
		return 0, errors.New("the server reports no pid; pass --pid of the server process")
	}
	pid := int(*m.PID)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
		return 0, fmt.Errorf("server pid %d is not visible here (%v); pass --pid", pid, err)
	}
	return pid, nil
}

// readRSS returns VmRSS of /proc/PID/status, in KiB.
func readRSS(pid int) (int64, error) { return readStatusKiB(pid, "VmRSS:") }

// readStatusKiB returns the figure of /proc/PID/status whose line starts
// with key (e.g. "VmHWM:"), in KiB.
func readStatusKiB(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		kb, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			return 0, fmt.Errorf("pid %d: %s %q", pid, key, rest)
		}
		return strconv.ParseInt(strings.TrimSpace(kb), 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("pid %d: no %s in /proc/%d/status", pid, key, pid)
}

// nodeMetricsRaw fetches every node's metrics as a generic map; a node
// without the endpoint gives nil.
func (c *apiClient) nodeMetricsRaw(ctx context.Context, bases []string) []map[string]any {
	out := make([]map[string]any, len(bases))
	for i, b := range bases {
		var m struct {
			Data map[string]any `json:"data"`
		}
		if c.callAt(ctx, b, http.MethodGet, "/api/v1/_/metrics", nil, true, &m) == nil {
			out[i] = m.Data
		}
	}
	return out
}
