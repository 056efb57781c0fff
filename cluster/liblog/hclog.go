package liblog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Raft returns the hclog.Logger to hand hashicorp/raft (its node, its
// transport and its snapshot store): records carry module=raft, raft's
// "error" is "err" as in svcd's own lines, and a peer that raft cannot
// reach is judged by the outage rule (noise.go).
func (b *Bridge) Raft() hclog.Logger {
	return &hcLogger{b: b, name: "raft", log: b.log.With("module", "raft")}
}

// hcLogger implements hclog.Logger over a slog.Logger. Its level is the
// slog handler's; SetLevel is ignored.
type hcLogger struct {
	b       *Bridge
	name    string
	log     *slog.Logger // with module and the With arguments
	implied []any
}

var _ hclog.Logger = (*hcLogger)(nil)

func (l *hcLogger) Log(level hclog.Level, msg string, args ...any) {
	contact := contactMessages[msg] && (msg == "failed to contact" || hasGoneError(args))
	lv := raftLevel(msg, slogLevel(level), args, l.b.quietInfo)
	if msg == "peer has newer term, stopping replication" {
		// This leader is superseded: by its own leadership transfer, or
		// by an election whose cause the other nodes log.
		lv = l.b.deposedLevel()
	}
	// A record below the handler's level costs nothing more than this
	// check, unless it is a failure to reach a peer: those are counted
	// whether shown or not.
	if !contact && !l.log.Enabled(context.Background(), lv) {
		return
	}
	attrs, peer := l.attrs(msg, args)
	if !contact {
		peer = ""
	}
	l.b.emit(l.log, lv, msg, peer, attrs)
}

func (l *hcLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *hcLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *hcLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *hcLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *hcLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *hcLogger) enabled(level hclog.Level) bool {
	return l.log.Enabled(context.Background(), slogLevel(level))
}

func (l *hcLogger) IsTrace() bool { return l.enabled(hclog.Trace) }
func (l *hcLogger) IsDebug() bool { return l.enabled(hclog.Debug) }
func (l *hcLogger) IsInfo() bool  { return l.enabled(hclog.Info) }
func (l *hcLogger) IsWarn() bool  { return l.enabled(hclog.Warn) }
func (l *hcLogger) IsError() bool { return l.enabled(hclog.Error) }

func (l *hcLogger) ImpliedArgs() []any { return l.implied }

func (l *hcLogger) With(args ...any) hclog.Logger {
	attrs, _ := l.attrs("", args)
	c := *l
	c.implied = append(append([]any(nil), l.implied...), args...)
	c.log = l.log.With(attrsToAny(attrs)...)
	return &c
}

func (l *hcLogger) Name() string { return l.name }

func (l *hcLogger) Named(name string) hclog.Logger {
	if l.name != "" {
		name = l.name + "." + name
	}
	return l.ResetNamed(name)
}

// ResetNamed renames the logger; the With arguments are kept.
func (l *hcLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	c.log = l.b.log.With("module", name)
	if len(l.implied) > 0 {
		attrs, _ := l.attrs("", l.implied)
		c.log = c.log.With(attrsToAny(attrs)...)
	}
	return &c
}

func (l *hcLogger) SetLevel(hclog.Level) {}

func (l *hcLogger) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if l.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

// StandardLogger and StandardWriter read the "[LEVEL] " prefix of each
// line, as memberlist's lines carry (stdlog.go).
func (l *hcLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(nil), "", 0)
}

func (l *hcLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return &lineWriter{b: l.b, log: l.log}
}

// slogLevel maps hclog's levels to slog's; Trace is below Debug.
func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// reservedKeys are slog's own keys: an argument with one of these names
// (raft's "failed to contact" has a "time") is renamed.
var reservedKeys = map[string]bool{slog.TimeKey: true, slog.LevelKey: true, slog.MessageKey: true, slog.SourceKey: true, "module": true, "node": true}

// attrs converts hclog's alternating keys and values into attributes:
// keys as svcd writes them ("error" is "err", spaces become
// underscores), raft's peers as {id, address}, durations and hclog's
// formats as text. peer names the peer a message is about, if any.
func (l *hcLogger) attrs(msg string, args []any) (attrs []slog.Attr, peer string) {
	for i := 0; i < len(args); i += 2 {
		key, _ := args[i].(string)
		if key == "" {
			key = fmt.Sprint(args[i])
		}
		var val any = "(missing)"
		if i+1 < len(args) {
			val = args[i+1]
		}
		switch key {
		case "error":
			key = "err"
		case "peer", "target":
			peer = peerKey(val)
		case "server-id":
			if msg == "failed to contact" {
				peer = fmt.Sprint(val)
			}
		}
		key = strings.ReplaceAll(key, " ", "_")
		if reservedKeys[key] {
			key = l.name + "_" + key
		}
		attrs = append(attrs, slog.Attr{Key: key, Value: value(val)})
	}
	if msg == "failed to decode incoming command" {
		peer = "incoming"
	}
	return attrs, peer
}

// peerKey names the peer of a raft record: its address (what a
// heartbeat failure names too).
func peerKey(v any) string {
	switch p := v.(type) {
	case raft.Server:
		return string(p.Address)
	case *raft.Server:
		return string(p.Address)
	default:
		return fmt.Sprint(v)
	}
}

// value converts one hclog argument.
func value(v any) slog.Value {
	switch x := v.(type) {
	case raft.Server:
		return slog.GroupValue(slog.String("id", string(x.ID)), slog.String("address", string(x.Address)),
			slog.String("suffrage", x.Suffrage.String()))
	case time.Duration:
		return slog.StringValue(x.String())
	case hclog.Format:
		if len(x) > 0 {
			if f, ok := x[0].(string); ok {
				return slog.StringValue(fmt.Sprintf(f, x[1:]...))
			}
		}
		return slog.StringValue(fmt.Sprint(x...))
	case error:
		if x == nil {
			return slog.AnyValue(nil)
		}
		return slog.StringValue(x.Error())
	case fmt.Stringer: // raft passes its *Raft: "Node at 10.0.0.1:8300 [Leader]"
		return slog.StringValue(x.String())
	default:
		return slog.AnyValue(v)
	}
}

// hasGoneError reports whether a record's error says the peer's process
// is not there or closed the connection.
func hasGoneError(args []any) bool {
	for i := 0; i+1 < len(args); i += 2 {
		if k, _ := args[i].(string); k == "error" {
			if err, ok := args[i+1].(error); ok && err != nil {
				return isConnectionGone(err.Error())
			}
			return isConnectionGone(fmt.Sprint(args[i+1]))
		}
	}
	return false
}

func attrsToAny(attrs []slog.Attr) []any {
	out := make([]any, len(attrs))
	for i, a := range attrs {
		out[i] = a
	}
	return out
}
