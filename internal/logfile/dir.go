// Package logfile keeps a node's JSONL log: one file per UTC day,
// <data>/logs/YYYY-MM-DD.jsonl, each line one JSON object (a request line
// written by the HTTP layer or an application line written through slog).
// The service never rotates or deletes these files; an operator archives
// or removes old days.
//
// Writes are buffered and flushed every FlushInterval and before every
// read, so a request never waits for the disk. A disk error is counted
// (Errors) and reported once on the error writer; it never fails the
// caller. Reads (Query, Search) scan the day files of a range, newest
// first.
//
// The package is a leaf: it imports nothing of svcd, so the command line,
// the stack and the HTTP layer share it. It holds no package-level state.
package logfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// DayLayout is the layout of a day in file names and queries (UTC).
const DayLayout = "2006-01-02"

// FlushInterval is how often buffered lines reach the file.
const FlushInterval = 250 * time.Millisecond

// FileName is the name of the file of day (YYYY-MM-DD) in the log folder.
func FileName(day string) string { return day + ".jsonl" }

// Options configure Open.
type Options struct {
	// Now is the clock that picks the day file and stamps lines (nil:
	// time.Now). Tests inject one to cross midnight without waiting.
	Now func() time.Time
	// Stderr receives the one report of a failing disk (nil: os.Stderr).
	Stderr io.Writer
}

// Dir is a node's log folder: the writer of today's file and the reader
// of every day's.
type Dir struct {
	path   string
	now    func() time.Time
	stderr io.Writer

	mu  sync.Mutex
	day string // the day of f ("" before the first line)
	f   *os.File
	w   *bufio.Writer

	errs     atomic.Int64
	reported atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	closed   bool
}

// Open returns the log folder at path (created on the first line) and
// starts its flusher; Close stops it.
func Open(path string, o Options) *Dir {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	d := &Dir{path: path, now: o.Now, stderr: o.Stderr, stop: make(chan struct{}), done: make(chan struct{})}
	go d.flusher()
	return d
}

// Path is the log folder.
func (d *Dir) Path() string { return d.path }

// Now is the clock lines are stamped with (UTC).
func (d *Dir) Now() time.Time { return d.now().UTC() }

// Errors is the number of lines lost to disk errors since Open.
func (d *Dir) Errors() int64 { return d.errs.Load() }

// Write appends p (one or more complete JSON lines, each ending in a
// newline) to the file of the current UTC day. It never fails: a disk
// error is counted and reported once.
func (d *Dir) Write(p []byte) (int, error) {
	day := d.Now().Format(DayLayout)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return len(p), nil
	}
	if day != d.day || d.f == nil {
		if !d.switchDay(day) {
			return len(p), nil // counted by switchDay; the next line tries again
		}
	}
	// Whole lines per write(2): an O_APPEND write is not split by another
	// process's, so processes sharing a folder never interleave a line.
	if d.w.Available() < len(p) && d.w.Buffered() > 0 {
		if err := d.w.Flush(); err != nil {
			d.drop(err)
		}
	}
	if _, err := d.w.Write(p); err != nil {
		d.drop(err)
	}
	return len(p), nil
}

// switchDay closes the previous day's file and opens day's (appending);
// false when it could not (the error is counted).
func (d *Dir) switchDay(day string) bool {
	d.closeFile()
	d.day = day
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		d.fail(err)
		return false
	}
	f, err := os.OpenFile(filepath.Join(d.path, FileName(day)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		d.fail(err)
		return false
	}
	d.f, d.w = f, bufio.NewWriterSize(f, 64<<10)
	return true
}

// closeFile flushes and closes the open file, if any. d.mu is held.
func (d *Dir) closeFile() {
	if d.f == nil {
		return
	}
	if err := d.w.Flush(); err != nil {
		d.fail(err)
	}
	if err := d.f.Close(); err != nil {
		d.fail(err)
	}
	d.f, d.w = nil, nil
}

// fail counts a disk error and reports the first on stderr.
func (d *Dir) fail(err error) {
	d.errs.Add(1)
	if d.reported.CompareAndSwap(false, true) {
		fmt.Fprintf(d.stderr, "svcd: writing the log folder %s failed (%v); lines are dropped and counted, requests go on; this is reported once\n", d.path, err)
	}
}

// Flush writes the buffered lines to the file.
func (d *Dir) Flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w != nil {
		if err := d.w.Flush(); err != nil {
			d.drop(err)
		}
	}
}

// drop counts a failed write and discards the buffered lines, so the
// writer (whose errors stick) takes the next line afresh. d.mu is held.
func (d *Dir) drop(err error) {
	d.fail(err)
	d.w.Reset(d.f)
}

func (d *Dir) flusher() {
	defer close(d.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.Flush()
		}
	}
}

// Close flushes and closes the file and stops the flusher; later lines
// are dropped.
func (d *Dir) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.closeFile()
	d.mu.Unlock()
	close(d.stop)
	<-d.done
	return nil
}
