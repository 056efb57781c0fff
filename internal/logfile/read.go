package logfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MaxPerPage caps a page of lines.
const MaxPerPage = 500

// maxLine is the longest line a read takes whole; longer lines (none the
// service writes) are skipped.
const maxLine = 1 << 20

// Query selects lines of the log folder. Lines are answered newest first.
type Query struct {
	// From and To bound the lines' time, both inclusive (UTC days
	// between them are read).
	From, To time.Time
	// Q, when set, keeps lines that contain it (ASCII case ignored).
	Q string
	// Level, when set, keeps lines at it or above (DEBUG < INFO < WARN <
	// ERROR).
	Level *slog.Level
	// Match, when set, keeps lines for which it answers true (Search's
	// JSONPath); v is the line decoded.
	Match func(v any) bool
	// Page (1-based) and PerPage choose the page.
	Page, PerPage int
}

// Page is one page of matching lines, newest first, in the list shape of
// the admin API.
type Page struct {
	Data       []json.RawMessage `json:"data"`
	Page       int               `json:"page"`
	PerPage    int               `json:"perPage"`
	TotalItems int               `json:"totalItems"`
	TotalPages int               `json:"totalPages"`
}

// lineHead is what a read decodes of every line.
type lineHead struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
}

// Days lists the days (YYYY-MM-DD) between from and to (UTC, inclusive)
// that have a file, newest first.
func (d *Dir) Days(from, to time.Time) ([]string, error) {
	ents, err := os.ReadDir(d.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lo, hi := from.UTC().Format(DayLayout), to.UTC().Format(DayLayout)
	var days []string
	for _, e := range ents {
		day, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		if _, err := time.Parse(DayLayout, day); err != nil {
			continue
		}
		if day >= lo && day <= hi {
			days = append(days, day)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(days)))
	return days, nil
}

// span is where one matching line lies in its day's file.
type span struct {
	day      int // index into the days read
	off, len int64
}

// Query answers q's page: buffered lines are flushed first, so the
// lines of requests answered before the call are in it.
func (d *Dir) Query(q Query) (Page, error) {
	d.Flush()
	if q.Page < 1 {
		q.Page = 1
	}
	if q.PerPage < 1 {
		q.PerPage = 30
	}
	days, err := d.Days(q.From, q.To)
	if err != nil {
		return Page{}, err
	}
	const maxInt = int(^uint(0) >> 1)
	start, end := maxInt-1, maxInt // a page past any count
	if q.Page-1 < (maxInt-1)/q.PerPage-1 {
		start = (q.Page - 1) * q.PerPage
		end = start + q.PerPage
	}
	var picked []span // newest first
	total := 0
	for i, day := range days {
		spans, n, err := d.scanDay(day, i, q, start-total, end-total)
		if err != nil {
			return Page{}, err
		}
		picked = append(picked, spans...)
		total += n
	}
	p := Page{Data: []json.RawMessage{}, Page: q.Page, PerPage: q.PerPage, TotalItems: total}
	p.TotalPages = (total + q.PerPage - 1) / q.PerPage
	for _, sp := range picked {
		line, err := d.readSpan(days[sp.day], sp)
		if err != nil {
			return Page{}, err
		}
		p.Data = append(p.Data, line)
	}
	return p, nil
}

// scanDay reads one day's file and returns how many of its lines match
// and where those of them lie whose newest-first rank in this file falls
// in [lo, hi), newest first.
func (d *Dir) scanDay(day string, idx int, q Query, lo, hi int) ([]span, int, error) {
	f, err := os.Open(filepath.Join(d.path, FileName(day)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	// The newest hi matches are the last hi of the file: keep a ring of
	// them (growing only as matches come) and pick [lo, hi) at the end.
	var ring []span
	n := 0
	keep := hi
	if keep > 0 && lo < hi {
		ring = make([]span, 0, min(keep, 1024))
	} else {
		keep = 0
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	for {
		line, size, err := readLine(r)
		if line != nil && q.matches(line) {
			if keep > 0 {
				sp := span{day: idx, off: off, len: int64(len(line))}
				if len(ring) < keep {
					ring = append(ring, sp)
				} else {
					ring[n%keep] = sp
				}
			}
			n++
		}
		off += size
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	// ring holds the last min(n, keep) matches; rank 0 is the newest.
	var out []span
	for rank := max(lo, 0); rank < min(hi, n); rank++ {
		i := n - 1 - rank // index in file order
		if keep == 0 || n-1-i >= len(ring) {
			break
		}
		out = append(out, ring[i%keep])
	}
	return out, n, nil
}

// readLine reads one line: its bytes without the newline (nil when
// empty or longer than maxLine) and its size in the file.
func readLine(r *bufio.Reader) ([]byte, int64, error) {
	var buf []byte
	var size int64
	for {
		chunk, err := r.ReadSlice('\n')
		size += int64(len(chunk))
		if size <= maxLine+2 {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if size > maxLine+2 || len(buf) == 0 {
			buf = nil
		}
		return buf, size, err
	}
}

// readSpan reads one line back.
func (d *Dir) readSpan(day string, sp span) (json.RawMessage, error) {
	f, err := os.Open(filepath.Join(d.path, FileName(day)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, sp.len)
	if _, err := f.ReadAt(b, sp.off); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// matches applies q's filters to one line (without its newline). Lines
// that are not JSON objects never match.
func (q Query) matches(line []byte) bool {
	if q.Q != "" && !containsFold(line, q.Q) {
		return false
	}
	var h lineHead
	if err := json.Unmarshal(line, &h); err != nil {
		return false
	}
	if h.Time.Before(q.From) || h.Time.After(q.To) {
		return false
	}
	if q.Level != nil {
		var l slog.Level
		if l.UnmarshalText([]byte(h.Level)) != nil || l < *q.Level {
			return false
		}
	}
	if q.Match != nil {
		var v any
		if json.Unmarshal(line, &v) != nil || !q.Match(v) {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains sub, ignoring ASCII case.
func containsFold(s []byte, sub string) bool {
	return bytes.Contains(bytes.ToLower(s), bytes.ToLower([]byte(sub)))
}

// ReadLogs answers the last limit lines of day (YYYY-MM-DD), oldest
// first (the agent protocol's read_logs and svc://logs/{date}).
func (d *Dir) ReadLogs(day string, limit int) ([]json.RawMessage, error) {
	from, err := time.Parse(DayLayout, day)
	if err != nil {
		return nil, err
	}
	if limit < 1 {
		limit = 100
	}
	p, err := d.Query(Query{From: from, To: from.Add(24*time.Hour - time.Nanosecond), Page: 1, PerPage: limit})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(p.Data)-1; i < j; i, j = i+1, j-1 {
		p.Data[i], p.Data[j] = p.Data[j], p.Data[i]
	}
	return p.Data, nil
}
