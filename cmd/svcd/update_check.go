package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The update check (update_check.enabled, update_check.url): every node,
// in the background, GETs the URL an operator set and logs what it found.
// Nothing is called while the URL is empty (the default); an unreachable
// or slow server costs one log line, never the start-up or the node.
//
// The URL answers a tiny JSON document, the latest release:
//
//	{"version": "v1.4.0", "url": "https://example.com/releases/v1.4.0"}
//
// Every node checks (not only the leader): the check only logs, and each
// node's log then says what that node runs against the latest release.

// updateAnswer is the document the update URL answers.
type updateAnswer struct {
	Version string `json:"version"`
	URL     string `json:"url"`
}

// updateOutcome names what one check found, for the log and the tests.
type updateOutcome string

const (
	updateOff         updateOutcome = "off"         // update_check.enabled is 0
	updateNoURL       updateOutcome = "no url"      // update_check.url is empty
	updateNewer       updateOutcome = "newer"       // a newer release exists
	updateCurrent     updateOutcome = "up to date"  // this build is the latest or newer
	updateUnknown     updateOutcome = "unknown"     // a version that cannot be compared (dev builds)
	updateUnreachable updateOutcome = "unreachable" // network error, timeout, non-200
	updateBadAnswer   updateOutcome = "bad answer"  // not the JSON above
	updateBadURL      updateOutcome = "bad url"     // not an http(s) URL
)

// updateChecker runs the check now and then.
type updateChecker struct {
	// setting reads a runtime setting (the engine's): the check follows
	// changes without a restart.
	setting func(key string) string
	current string
	client  *http.Client
	log     *slog.Logger
	// first is the wait before the first check, every the wait between
	// checks.
	first, every time.Duration
}

// newUpdateChecker checks with a 10 s budget per request, a first time a
// minute after start and then daily.
func newUpdateChecker(setting func(string) string, current string, log *slog.Logger) *updateChecker {
	return &updateChecker{setting: setting, current: current, log: log,
		client: &http.Client{Timeout: 10 * time.Second}, first: time.Minute, every: 24 * time.Hour}
}

// run checks until ctx ends.
func (u *updateChecker) run(ctx context.Context) {
	t := time.NewTimer(u.first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		u.check(ctx)
		t.Reset(u.every)
	}
}

// check runs one check, logs its outcome and returns it.
func (u *updateChecker) check(ctx context.Context) (updateOutcome, updateAnswer) {
	if v := strings.TrimSpace(u.setting("update_check.enabled")); v == "0" || strings.EqualFold(v, "false") {
		return updateOff, updateAnswer{}
	}
	raw := strings.TrimSpace(u.setting("update_check.url"))
	if raw == "" {
		return updateNoURL, updateAnswer{}
	}
	if p, err := url.Parse(raw); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		u.log.Warn("update check: update_check.url is not an http(s) URL", "url", raw)
		return updateBadURL, updateAnswer{}
	}
	ans, err := u.fetch(ctx, raw)
	var bad *badAnswerError
	switch {
	case errors.As(err, &bad):
		u.log.Warn("update check: the answer is not {version, url}", "url", raw, "err", err)
		return updateBadAnswer, updateAnswer{}
	case err != nil:
		u.log.Warn("update check: unreachable", "url", raw, "err", err)
		return updateUnreachable, updateAnswer{}
	}
	switch cmp, ok := compareVersions(ans.Version, u.current); {
	case !ok:
		u.log.Info("update check: latest release", "latest", ans.Version, "running", u.current, "release", ans.URL)
		return updateUnknown, ans
	case cmp > 0:
		u.log.Info("update check: a newer release is available", "latest", ans.Version, "running", u.current, "release", ans.URL)
		return updateNewer, ans
	default:
		u.log.Info("update check: up to date", "latest", ans.Version, "running", u.current)
		return updateCurrent, ans
	}
}

// badAnswerError: the server answered, but not the document.
type badAnswerError struct{ err error }

func (e *badAnswerError) Error() string { return e.err.Error() }

// fetch GETs the document (64 KiB at most).
func (u *updateChecker) fetch(ctx context.Context, raw string) (updateAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return updateAnswer{}, err
	}
	req.Header.Set("User-Agent", "svcd/"+u.current)
	req.Header.Set("Accept", "application/json")
	res, err := u.client.Do(req)
	if err != nil {
		return updateAnswer{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return updateAnswer{}, fmt.Errorf("status %d", res.StatusCode)
	}
	var ans updateAnswer
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&ans); err != nil {
		return updateAnswer{}, &badAnswerError{fmt.Errorf("decode: %w", err)}
	}
	if _, ok := parseVersion(ans.Version); !ok {
		return updateAnswer{}, &badAnswerError{fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH", ans.Version)}
	}
	return ans, nil
}

// parseVersion reads v1.2.3 (the v optional; a -pre or +build suffix is
// ignored for the comparison).
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// compareVersions returns 1 when a is newer than b, 0 when equal, -1 when
// older; ok is false when either is not a version (a dev build).
func compareVersions(a, b string) (int, bool) {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return 0, false
	}
	for i := range va {
		switch {
		case va[i] > vb[i]:
			return 1, true
		case va[i] < vb[i]:
			return -1, true
		}
	}
	return 0, true
}
