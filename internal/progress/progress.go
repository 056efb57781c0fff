// Package progress reports how far a long piece of work got: a CSV import
// or export, a Raft snapshot written or restored, a check of a node's
// files. A Reporter counts what is done (rows, entries, bytes) and, every
// interval, hands a Status (done, total when known, rate, time left) to a
// Sink; when the work ends it hands over a final Status, the summary.
//
// Sinks: Log writes slog lines (the server's components, with the logger
// they were given), Lines writes plain text lines and Bar redraws one
// line on a terminal (the command line; Terminal picks between the two).
//
// The package is a leaf: it imports nothing of svcd, so the state machine,
// the engine's modules and the command line all use it. It holds no
// package-level state; every Reporter stands alone.
package progress

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is the time between two reports unless Options.Interval
// says otherwise.
const DefaultInterval = 5 * time.Second

// Options describe the work a Reporter follows.
type Options struct {
	// Unit names what Add counts ("rows", "entries"); empty when the work
	// counts no units.
	Unit string
	// Total is how many units the work has, TotalBytes how many bytes (0:
	// not known). Time left is estimated from TotalBytes when it is known,
	// else from Total.
	Total, TotalBytes int64
	// Bytes says the work counts bytes (AddBytes): reports carry them and
	// their rate. Work that counts neither units nor bytes reports only
	// the time it has taken.
	Bytes bool
	// Interval is the time between two reports (0: DefaultInterval).
	Interval time.Duration
	// Attrs are added to every report (the collection, the snapshot's
	// index).
	Attrs []slog.Attr
	// Brief leaves out the summary of work that ended before its first
	// progress report: for the command line, whose own output says how a
	// short step ended.
	Brief bool
}

// Sink receives the reports of a Reporter, from the Reporter's own
// goroutine and, for the final one, from the goroutine that calls Finish.
// Reports never overlap.
type Sink interface {
	Report(Status)
}

// Reporter follows one piece of work. Its methods are safe for concurrent
// use and do nothing on a nil *Reporter, so a caller that was given none
// needs no check.
type Reporter struct {
	what  string
	sink  Sink
	every time.Duration
	attrs []slog.Attr
	brief bool

	start time.Time
	// mu orders the reports and guards the phase and what it counts.
	mu        sync.Mutex
	unit      string
	bytes     bool
	phase     string
	phaseAt   time.Time
	done, n   atomic.Int64 // units, bytes
	total, tb atomic.Int64 // their totals
	// prev holds the counts of the last phase that counted something,
	// for a summary that ends in a phase that counts nothing.
	prev *counts

	stop     chan struct{}
	stopped  chan struct{}
	finished atomic.Bool
	reported bool // a progress report was made (guarded by mu)
}

// Start begins following the work named what ("csv import") and reports
// to sink every interval until Finish, which must be called (it stops
// the Reporter's goroutine). The first report comes one interval after
// the start: work shorter than that reports only its summary.
func Start(sink Sink, what string, opts Options) *Reporter {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	r := &Reporter{
		what: what, sink: sink, every: opts.Interval, attrs: opts.Attrs,
		bytes: opts.Bytes, unit: opts.Unit, brief: opts.Brief,
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
	r.start = time.Now()
	r.phaseAt = r.start
	r.total.Store(opts.Total)
	r.tb.Store(opts.TotalBytes)
	go r.loop()
	return r
}

// Log starts a Reporter that writes its reports to log: "<what> progress"
// lines at INFO, and "<what> done" (INFO), "<what> canceled" (INFO) or
// "<what> failed" (WARN) at the end.
func Log(log *slog.Logger, what string, opts Options) *Reporter {
	if log == nil {
		log = slog.Default()
	}
	return Start(LogSink{Logger: log}, what, opts)
}

func (r *Reporter) loop() {
	defer close(r.stopped)
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if !r.finished.Load() {
				r.sink.Report(r.status(false, nil, nil))
				r.reported = true
			}
			r.mu.Unlock()
		}
	}
}

// Add counts n more units done.
func (r *Reporter) Add(n int64) {
	if r != nil {
		r.done.Add(n)
	}
}

// AddBytes counts n more bytes done.
func (r *Reporter) AddBytes(n int64) {
	if r != nil {
		r.n.Add(n)
	}
}

// SetBytes sets the bytes done (for work that knows its position, such
// as a reader's offset).
func (r *Reporter) SetBytes(n int64) {
	if r != nil {
		r.n.Store(n)
	}
}

// SetTotal sets the units the work has (0: not known).
func (r *Reporter) SetTotal(n int64) {
	if r != nil {
		r.total.Store(n)
	}
}

// SetTotalBytes sets the bytes the work has (0: not known).
func (r *Reporter) SetTotalBytes(n int64) {
	if r != nil {
		r.tb.Store(n)
	}
}

// counts are the counts of a phase.
type counts struct {
	unit        string
	countsBytes bool
	done, bytes int64
}

// Phase starts the next step of a work done in steps (a snapshot is
// copied, then written out; received, then checked): the counts start
// again from zero, what is counted and the totals are opts' (Unit, Bytes,
// Total, TotalBytes; the rest of opts is ignored), and reports name the
// phase and measure rates over it. The summary carries the counts of the
// last phase that counted something, and the time and rate of the whole
// work.
func (r *Reporter) Phase(name string, opts Options) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, n := r.done.Load(), r.n.Load(); d != 0 || n != 0 {
		r.prev = &counts{unit: r.unit, countsBytes: r.bytes, done: d, bytes: n}
	}
	r.phase, r.unit, r.bytes, r.phaseAt = name, opts.Unit, opts.Bytes, time.Now()
	r.done.Store(0)
	r.n.Store(0)
	r.total.Store(opts.Total)
	r.tb.Store(opts.TotalBytes)
}

// Finish ends the work and reports the summary (unless Options.Brief and
// no progress was reported): err nil for success, else why it stopped;
// extra attributes (what the work produced) are added to the summary.
// Only the first call reports.
func (r *Reporter) Finish(err error, extra ...slog.Attr) {
	if r == nil || r.finished.Swap(true) {
		return
	}
	close(r.stop)
	<-r.stopped
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.brief && !r.reported {
		return
	}
	r.sink.Report(r.status(true, err, extra))
}

// status is the report of now. Called with mu held.
func (r *Reporter) status(final bool, err error, extra []slog.Attr) Status {
	now := time.Now()
	s := Status{
		What: r.what, Phase: r.phase, Unit: r.unit, CountsBytes: r.bytes,
		Done: r.done.Load(), Total: r.total.Load(),
		Bytes: r.n.Load(), TotalBytes: r.tb.Load(),
		Elapsed: now.Sub(r.start), Left: -1,
		Final: final, Err: err, Attrs: r.attrs, Extra: extra,
	}
	s.PhaseElapsed = now.Sub(r.phaseAt)
	if final && s.Done == 0 && s.Bytes == 0 && r.prev != nil {
		s.Unit, s.CountsBytes, s.Done, s.Bytes = r.prev.unit, r.prev.countsBytes, r.prev.done, r.prev.bytes
	}
	if !final {
		if f, ok := s.Fraction(); ok && f > 0 && f < 1 {
			s.Left = time.Duration(float64(s.PhaseElapsed) * (1 - f) / f)
		} else if ok && f >= 1 {
			s.Left = 0
		}
	}
	return s
}

// Canceled reports whether err ended the work because its caller gave up
// (a client went away, a deadline passed) rather than because it failed.
func Canceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
