package liblog

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// Memberlist returns the *log.Logger to hand hashicorp/memberlist
// (memberlist.Config.Logger). It writes lines such as
// "[ERR] memberlist: Push/Pull with n2 failed: ...": each becomes a record
// at the level its tag names, with module=memberlist, the tag and the
// "memberlist: " prefix removed; a failed exchange with a peer is judged
// by the outage rule (noise.go).
func (b *Bridge) Memberlist() *log.Logger {
	return log.New(&lineWriter{b: b, log: b.log.With("module", "memberlist")}, "", 0)
}

// lineWriter turns "[LEVEL] module: message" lines into records.
type lineWriter struct {
	b   *Bridge
	log *slog.Logger
}

// Write takes one or more lines; *log.Logger writes one per call.
func (w *lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			w.line(line)
		}
	}
	return len(p), nil
}

func (w *lineWriter) line(line string) {
	level, msg := splitLevel(line)
	// memberlist names itself in every message; the module attribute
	// says it already.
	msg = strings.TrimPrefix(msg, "memberlist: ")
	peer, contact := memberlistPeer(msg)
	if !contact || !isConnectionGone(msg) {
		peer = ""
	}
	if peer == "" && !w.log.Enabled(context.Background(), level) {
		return
	}
	w.b.emit(w.log, level, msg, peer, nil)
}

// levelTags are the tags of the standard-logger convention hashicorp's
// libraries follow.
var levelTags = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4, "DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
	"WARN": slog.LevelWarn, "WARNING": slog.LevelWarn, "ERR": slog.LevelError, "ERROR": slog.LevelError,
}

// splitLevel reads a line's "[LEVEL] " tag; a line without one is INFO.
func splitLevel(line string) (slog.Level, string) {
	if strings.HasPrefix(line, "[") {
		if i := strings.IndexByte(line, ']'); i > 0 {
			if lv, ok := levelTags[strings.ToUpper(line[1:i])]; ok {
				return lv, strings.TrimSpace(line[i+1:])
			}
		}
	}
	return slog.LevelInfo, line
}
