package backup

import (
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"svcd/engine"
)

// Scheduled backups run on the leader (scheduler.Backups asks NextBackup
// and calls RunBackup): at each time of backup.schedule, a consistent
// copy goes to backup.to under svcd-backup-<UTC time>-i<index>.db[.gz],
// then the backups of that destination beyond the backup.keep newest are
// deleted, and the run is recorded through the log, so a new leader goes
// on from the last run instead of starting the schedule over.

// NextBackup is when the next scheduled backup is due, and false while
// none is scheduled (backup.schedule or backup.to empty). With no run
// recorded the schedule counts from since (when this node began to lead);
// a time missed while no node led is due at once, once.
func (b *Backups) NextBackup(ctx context.Context, since time.Time) (time.Time, bool, error) {
	sched, _, err := b.scheduled()
	if err != nil || sched == nil {
		return time.Time{}, false, err
	}
	last, err := b.lastScheduled(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	from := since
	if !last.IsZero() {
		from = last
	}
	return sched.Next(from), true, nil
}

// errNoTarget answers a backup asked for while backup.to is empty.
var errNoTarget = engine.FieldError(settingTo, "Set backup.to (an absolute directory or s3://bucket/prefix) to write backups")

// RunBackup writes a backup to backup.to now, deletes the backups of that
// destination beyond the backup.keep newest, and records the run (a
// failed one too). trigger is "schedule" or "manual".
func (b *Backups) RunBackup(ctx context.Context, trigger string) (*Run, error) {
	to := strings.TrimSpace(b.core.Setting(settingTo))
	if to == "" {
		return nil, errNoTarget
	}
	if b.targets == nil {
		return nil, engine.Errorf(engine.KindUnavailable, "This node cannot write backups to a destination")
	}
	start := b.core.Now()
	run := &Run{At: start.Unix(), Trigger: trigger, Target: to, Node: b.node}
	err := b.writeBackup(ctx, to, run)
	run.DurationMs = b.core.Now().Sub(start).Milliseconds()
	if err != nil {
		run.Error = err.Error()
		b.log.Warn("backup failed", "trigger", trigger, "to", to, "err", err)
	} else {
		run.OK = true
		b.log.Info("backup written", "trigger", trigger, "to", to, "key", run.Key, "bytes", run.Size, "index", run.Index, "pruned", run.Pruned)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rerr := b.record(rctx, *run); rerr != nil {
		b.log.Warn("backup: could not record the run", "err", rerr)
		if err == nil {
			err = rerr
		}
	}
	return run, err
}

// writeBackup copies the database, writes it to the destination and
// applies the retention, filling run.
func (b *Backups) writeBackup(ctx context.Context, to string, run *Run) error {
	c, err := b.Take()
	if err != nil {
		return err
	}
	defer c.Remove()
	run.Index, run.SHA256, run.Key = c.Index, c.SHA256, c.Name()
	gz := b.core.SettingBool(settingGzip)
	if gz {
		run.Key += ".gz"
	}
	t, err := b.targets.Open(ctx, to)
	if err != nil {
		return fmt.Errorf("open %s: %w", to, err)
	}
	defer t.Close()
	f, err := c.Open()
	if err != nil {
		return err
	}
	defer f.Close()
	var src io.Reader = f
	if gz {
		zr := gzipped(f)
		defer zr.Close() // ends the compressor when the write stops early
		src = zr
	}
	cw := &countingReader{r: src}
	if err := t.Put(ctx, run.Key, cw); err != nil {
		return fmt.Errorf("write %s: %w", run.Key, err)
	}
	run.Size = cw.n
	pruned, err := prune(ctx, t, b.keep())
	run.Pruned = pruned
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	return nil
}

// prune deletes the backups of t beyond the keep newest (0: none). Only
// names the service writes count; their UTC time makes their order.
func prune(ctx context.Context, t Target, keep int) (int, error) {
	if keep <= 0 {
		return 0, nil
	}
	var names []string
	err := t.List(ctx, func(key string) error {
		if _, _, ok := parseName(key); ok {
			names = append(names, key)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	slices.SortFunc(names, func(a, b string) int {
		at, ai, _ := parseName(a)
		bt, bi, _ := parseName(b)
		return cmp.Or(strings.Compare(at, bt), cmp.Compare(ai, bi), strings.Compare(a, b))
	})
	n := 0
	var errs []error
	for len(names) > keep {
		if err := t.Delete(ctx, names[0]); err != nil {
			errs = append(errs, err)
		} else {
			n++
		}
		names = names[1:]
	}
	return n, errors.Join(errs...)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipped streams r compressed; closing it stops the compression.
func gzipped(r io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		zw := gzip.NewWriter(pw)
		_, err := io.Copy(zw, r)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// RunScheduledBackup is RunBackup as the schedule starts it.
func (b *Backups) RunScheduledBackup(ctx context.Context) error {
	_, err := b.RunBackup(ctx, "schedule")
	return err
}

// parseName reads a backup's name, svcd-backup-<UTC time>-i<index>.db or
// .db.gz: its time (as written, which sorts) and its index.
func parseName(name string) (at string, index uint64, ok bool) {
	rest, found := strings.CutPrefix(name, NamePrefix)
	if !found {
		return "", 0, false
	}
	if r, gz := strings.CutSuffix(rest, ".db.gz"); gz {
		rest = r
	} else if r, db := strings.CutSuffix(rest, ".db"); db {
		rest = r
	} else {
		return "", 0, false
	}
	at, idx, found := strings.Cut(rest, "-i")
	if !found || len(at) != len("20060102T150405Z") {
		return "", 0, false
	}
	index, err := strconv.ParseUint(idx, 10, 64)
	return at, index, err == nil
}
