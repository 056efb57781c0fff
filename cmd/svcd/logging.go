package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"svcd/internal/logfile"
)

// How the process writes its log. Everything goes through one slog
// handler: svcd's own lines, hashicorp/raft's and memberlist's
// (cluster/liblog), the standard library's log package and net/http's
// errors (slog.SetDefault). Text (key=value) for a person at a terminal,
// JSON lines for a collector; --log-format or SVC_LOG_FORMAT chooses.

// logOptions are the log settings of a command: format ("text", "json"
// or "" to choose by the output) and level.
type logOptions struct {
	format string
	level  slog.Level
}

// logFlagUsage is the help of --log-format.
const logFlagUsage = "log `FORMAT`: text or json (SVC_LOG_FORMAT; default: text on a terminal, json otherwise)"

// logEnv reads SVC_LOG_LEVEL (default def) and SVC_LOG_FORMAT.
func logEnv(def slog.Level) (logOptions, error) {
	o := logOptions{format: os.Getenv("SVC_LOG_FORMAT"), level: def}
	if v := os.Getenv("SVC_LOG_LEVEL"); v != "" {
		if err := o.level.UnmarshalText([]byte(v)); err != nil {
			return o, fmt.Errorf("SVC_LOG_LEVEL: %w", err)
		}
	}
	return o, checkLogFormat(o.format)
}

// checkLogFormat accepts the values of --log-format ("" is the default).
func checkLogFormat(f string) error {
	switch strings.ToLower(f) {
	case "", "text", "json":
		return nil
	}
	return fmt.Errorf("log format %q: want text or json", f)
}

// resolve fixes the format for the output w: text on a terminal, JSON
// otherwise, unless one was chosen.
func (o logOptions) resolve(w io.Writer) logOptions {
	o.format = strings.ToLower(o.format)
	if o.format == "" {
		o.format = "json"
		if isTerminal(w) {
			o.format = "text"
		}
	}
	return o
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newLogger writes to w in o's format (resolved for w) at o's level.
func newLogger(w io.Writer, o logOptions) *slog.Logger {
	o = o.resolve(w)
	hopts := &slog.HandlerOptions{Level: o.level}
	if o.format == "text" {
		return slog.New(slog.NewTextHandler(w, hopts))
	}
	return slog.New(slog.NewJSONHandler(w, hopts))
}

// useAsDefault makes log the process's default logger: slog's top-level
// functions and the standard log package (what libraries print with
// log.Printf) write through it. Only main's commands call it, once.
func useAsDefault(log *slog.Logger) {
	slog.SetDefault(log)
}

// withLogFolder tees log into the node's log folder: stderr keeps its
// lines as they were, and the folder gets each as a JSON line ("kind":
// "app", secrets redacted) at level and above.
func withLogFolder(log *slog.Logger, d *logfile.Dir, level slog.Level) *slog.Logger {
	return slog.New(logfile.Tee(log.Handler(), d.Handler(level)))
}
