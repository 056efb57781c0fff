package jsvm

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"svcd/engine"
)

// ModuleOptions are what the module needs besides the core: the outside
// world reaches it through interfaces it declares, wired by the
// composition root.
type ModuleOptions struct {
	// VM sizes the pool of runtimes and the cache of programs.
	VM Options
	// HTTP performs helpers.http's requests through the egress guard;
	// Fetch performs helpers.fetch's, unguarded. Nil: the helper throws.
	HTTP, Fetch HTTPClient
	// Outbound posts mail over the HTTP mail transport (nil: SMTP only).
	Outbound engine.Outbound
	// Env reads the node's environment for helpers.os.env (nil: empty).
	Env func(string) string
	// NodeID names this node (helpers.os.nodeId; nil: "").
	NodeID func() string
	// MaxDepth bounds nested hooks (0: 5).
	MaxDepth int
	// Auditor records the writes code makes as the system (nil: not
	// audited).
	Auditor Auditor
}

// Module is the engine's JavaScript module: hooks and custom routes (the
// admin CRUD, their tables and commands), the record interceptor that
// runs hooks, the serving of routes, and the helpers every kind of code
// receives. Jobs, queue workers and workflows run their code through Run.
type Module struct {
	core    *engine.Engine
	vm      *VM
	log     *slog.Logger
	set     atomic.Pointer[codeSet]
	http    HTTPClient
	fetch   HTTPClient
	out     engine.Outbound
	env     func(string) string
	nodeID  func() string
	auditor Auditor
	depth   int
	// after bounds the after-hooks running at once on this node.
	after chan struct{}
	// Set after wiring, when the modules that provide them exist.
	enqueuer  atomic.Pointer[Enqueuer]
	workflows atomic.Pointer[Workflows]
	flags     atomic.Pointer[FlagEvaluator]
	webhooks  atomic.Pointer[WebhookDispatcher]
	notifier  atomic.Pointer[Notifier]
}

// HTTPClient performs one outbound request, reading at most maxBytes of
// the response body (an error beyond). api/egress provides both.
type HTTPClient interface {
	Request(ctx context.Context, method, url string, header map[string]string, body []byte, maxBytes int64) (status int, respHeader map[string][]string, respBody []byte, err error)
}

// NewModule wires the module to core: its tables, commands, the record
// interceptor and the cache of hooks and routes.
func NewModule(core *engine.Engine, opts ModuleOptions) *Module {
	m := &Module{
		core: core, vm: New(opts.VM), log: core.Logger(),
		http: opts.HTTP, fetch: opts.Fetch, out: opts.Outbound, env: opts.Env, nodeID: opts.NodeID, auditor: opts.Auditor,
		depth: opts.MaxDepth, after: make(chan struct{}, afterSlots),
	}
	if m.depth <= 0 {
		m.depth = defaultMaxDepth
	}
	if m.env == nil {
		m.env = func(string) string { return "" }
	}
	if m.nodeID == nil {
		m.nodeID = func() string { return "" }
	}
	m.set.Store(emptySet())
	m.registerTables()
	m.registerSettings()
	m.registerCommands()
	core.SetRecordInterceptor(interceptor{m})
	core.OnEvents(m.onEvents)
	if err := m.reload(context.Background()); err != nil {
		m.log.Error("jsvm: load hooks and routes", "err", err)
	}
	return m
}

// VM is the module's runtime pool (for code run outside the module).
func (m *Module) VM() *VM { return m.vm }

// Bounds of the module.
const (
	// defaultMaxDepth bounds nested hooks: a hook whose code writes a
	// record whose hooks write records... (ModuleOptions.MaxDepth).
	defaultMaxDepth = 5
	// afterSlots bounds the after-hooks running at once; more wait.
	afterSlots = 64
	// maxCodeBytes bounds the code of one hook or route.
	maxCodeBytes = 256 << 10
)

// Errors of the module.
var (
	errHookNotFound  = engine.Errorf(engine.KindNotFound, "Hook not found")
	errRouteNotFound = engine.Errorf(engine.KindNotFound, "Route not found")
	errNoRoute       = engine.Errorf(engine.KindNotFound, "No custom route matches this request")
)

// checkCode adds the problem of code, if any, to d: blank, too long, or
// not compiling (the position in the author's code).
func (m *Module) checkCode(code string, d map[string]any) {
	switch {
	case code == "":
		d["code"] = "cannot be blank"
		return
	case len(code) > maxCodeBytes:
		d["code"] = "must be at most 256 KiB"
		return
	}
	err := m.vm.Check(code)
	var ce *CompileError
	switch {
	case errors.As(err, &ce):
		d["code"] = ce.Error()
		if ce.Line > 0 {
			d["line"], d["column"] = ce.Line, ce.Column
		}
	case err != nil:
		d["code"] = err.Error()
	}
}

// timeout is the execution budget (execution.timeout_ms; 0: none).
func (m *Module) timeout() time.Duration {
	return time.Duration(settingInt(m.core, "execution.timeout_ms", 5000)) * time.Millisecond
}

// slow is the duration past which a hook's run is logged
// (hooks.slow_ms).
func (m *Module) slow() time.Duration {
	return time.Duration(settingInt(m.core, "hooks.slow_ms", 1000)) * time.Millisecond
}
