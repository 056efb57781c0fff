package main

import (
	"fmt"
	"os"
	"time"

	"svcd/cluster"
	"svcd/internal/progress"
)

// progressIntervalEnv reads SVC_PROGRESS_INTERVAL, the time between two
// progress reports of long work (a Go duration; unset: the default, 5 s
// between log lines, a bar redrawn every 200 ms on a terminal).
func progressIntervalEnv() (time.Duration, error) {
	v := os.Getenv("SVC_PROGRESS_INTERVAL")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("SVC_PROGRESS_INTERVAL: want a positive Go duration such as 5s, got %q", v)
	}
	return d, nil
}

// cliProgress follows one step of a command's long work on its standard
// error: a bar redrawn in place on a terminal, plain lines otherwise
// (progress.Terminal), every SVC_PROGRESS_INTERVAL when it is set. A
// step that ends before its first report prints nothing: the command's
// own output says how it went. The caller finishes it.
func cliProgress(what string, opts progress.Options) *progress.Reporter {
	sink, every := progress.Terminal(os.Stderr)
	if d, err := progressIntervalEnv(); err == nil && d > 0 {
		every = d
	}
	opts.Interval, opts.Brief = every, true
	return progress.Start(sink, what, opts)
}

// verifyLog is cluster.VerifyLogProgress with its progress on standard
// error.
func verifyLog(raftDir string) (*cluster.LogReport, error) {
	prog := cliProgress("checking the Raft log", progress.Options{})
	rep, err := cluster.VerifyLogProgress(raftDir, prog)
	prog.Finish(err)
	return rep, err
}

// verifySnapshot is cluster.VerifySnapshotProgress with its progress on
// standard error.
func verifySnapshot(raftDir string) (string, error) {
	prog := cliProgress("checking the newest snapshot", progress.Options{Bytes: true})
	dir, err := cluster.VerifySnapshotProgress(raftDir, prog)
	prog.Finish(err)
	return dir, err
}
