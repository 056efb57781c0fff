package engine

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"svcd/engine/crypt"
	"svcd/engine/password"
	"svcd/fsm"
)

// Proposer commits a command through the log and returns the state
// machine's result, the log index and the command's error.
type Proposer interface {
	Apply(ctx context.Context, cmd fsm.Command) (any, uint64, error)
}

// Options configure an Engine.
type Options struct {
	Store *fsm.Store
	// Clock is the wall clock for timestamps resolved before proposing.
	Clock  func() time.Time
	Logger *slog.Logger
	// PasswordParams are the argon2id costs for new hashes.
	PasswordParams password.Params
	// Outbound makes HTTP requests to the outside through the SSRF guard
	// (the password breach check).
	Outbound Outbound
	// Keyring seals secret settings and encrypted fields (nil: no
	// encryption key, values are stored as they are).
	Keyring *crypt.Keyring
}

// Engine is the domain service of one node.
type Engine struct {
	store    *fsm.Store
	proposer Proposer
	now      func() time.Time
	log      *slog.Logger
	pwParams password.Params
	outbound Outbound
	keyring  *crypt.Keyring

	schema   atomic.Pointer[schemaSet]
	settings atomic.Pointer[map[string]string]
	applied  *applyCache
	version  atomic.Int64           // schema version of the internal tables
	etagKey  atomic.Pointer[[]byte] // see etag.go

	reg registries // module.go

	recs *Records // services.go
	ddl  *Schema
}

// New builds the engine and registers its command handlers on the store's
// registry. Call it before the consensus layer starts applying entries.
func New(opts Options) (*Engine, error) {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PasswordParams == (password.Params{}) {
		opts.PasswordParams = password.Default
	}
	e := &Engine{
		store:    opts.Store,
		now:      opts.Clock,
		log:      opts.Logger,
		pwParams: opts.PasswordParams,
		outbound: opts.Outbound,
		keyring:  opts.Keyring,
		applied:  newApplyCache(),
	}
	e.recs, e.ddl = &Records{e: e, ids: newRecordIDs()}, &Schema{e: e}
	e.reg.fsm = opts.Store.Registry()
	e.register()
	opts.Store.Observe(e.onEvents)
	if err := e.reloadAll(context.Background()); err != nil {
		return nil, err
	}
	return e, nil
}

// SetProposer connects the engine to the consensus layer; wiring is over
// (Seal).
func (e *Engine) SetProposer(p Proposer) {
	e.reg.sealed.Store(true)
	e.proposer = p
}

// onEvents rebuilds the caches that committed commands invalidated.
func (e *Engine) onEvents(events []fsm.Event) {
	var schema, settings, all bool
	for _, ev := range events {
		switch ev.Kind {
		case EvSchema:
			schema = true
		case EvSettings:
			settings = true
		case fsm.KindRestore, EvMigrate:
			schema, settings, all = true, true, true
			e.applied.reset()
		}
	}
	ctx := context.Background()
	if all {
		if v, err := e.readSchemaVersion(ctx); err == nil {
			e.version.Store(v)
		}
	}
	if schema {
		if err := e.reloadSchema(ctx); err != nil {
			e.log.Error("reload collections", "err", err)
		}
	}
	if settings {
		if err := e.reloadSettings(ctx); err != nil {
			e.log.Error("reload settings", "err", err)
		}
	}
	if all {
		if err := e.reloadETagKey(ctx); err != nil {
			e.log.Error("reload etag key", "err", err)
		}
	}
	for _, h := range e.reg.onEvents {
		h(events)
	}
}

func (e *Engine) reloadAll(ctx context.Context) error {
	v, err := e.readSchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.version.Store(v)
	e.schema.Store(&schemaSet{byName: map[string]*Coll{}, byID: map[string]*Coll{}})
	e.settings.Store(&map[string]string{})
	if v == 0 {
		return nil
	}
	if err := e.reloadSchema(ctx); err != nil {
		return err
	}
	if err := e.reloadSettings(ctx); err != nil {
		return err
	}
	return e.reloadETagKey(ctx)
}

// Propose encodes payload as command t's JSON and commits it through the
// log: the handler's result, the log index and the command's error.
func (e *Engine) Propose(ctx context.Context, t fsm.Type, payload any) (any, uint64, error) {
	if e.proposer == nil {
		return nil, 0, Errorf(KindUnavailable, "the node is starting")
	}
	cmd, err := encodeCmd(t, payload)
	if err != nil {
		return nil, 0, err
	}
	return e.proposer.Apply(ctx, cmd)
}

// encodeCmd encodes payload in its binary form when it has one for this
// value (cmd_binary.go), else as JSON.
func encodeCmd(t fsm.Type, payload any) (fsm.Command, error) {
	if ba, ok := payload.(encoding.BinaryAppender); ok {
		b, err := ba.AppendBinary(make([]byte, 0, 1024))
		if err == nil {
			return fsm.Command{Type: t, Version: cmdVersionBinary, Payload: b}, nil
		}
		if !errors.Is(err, ErrNoBinary) {
			return fsm.Command{}, fmt.Errorf("engine: encode command: %w", err)
		}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return fsm.Command{}, fmt.Errorf("engine: encode command: %w", err)
	}
	return fsm.Command{Type: t, Version: cmdVersionJSON, Payload: b}, nil
}

// decodeCmd decodes a command's payload: the binary form (version 2) for
// payload types that have one, else JSON with numbers kept exact.
func decodeCmd[T any](cmd fsm.Command) (*T, error) {
	var v T
	if cmd.Version == cmdVersionBinary {
		u, ok := any(&v).(encoding.BinaryUnmarshaler)
		if !ok {
			return nil, fmt.Errorf("%w: decode payload: %T has no binary form", fsm.ErrHalt, v)
		}
		if err := u.UnmarshalBinary(cmd.Payload); err != nil {
			return nil, fmt.Errorf("%w: decode payload: %v", fsm.ErrHalt, err)
		}
		return &v, nil
	}
	dec := json.NewDecoder(bytesReader(cmd.Payload))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: decode payload: %v", fsm.ErrHalt, err)
	}
	return &v, nil
}
