package api

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"svcd/api/dashboard"
	"svcd/api/pbcompat"
	"svcd/cluster"
	"svcd/engine/mcp"
	"svcd/internal/tracing"
	"svcd/realtime"
)

// Options configure the HTTP server.
type Options struct {
	// The domain's services, each the interface its routes declare: the
	// engine's core, then its modules.
	Settings    SettingStore
	Migrations  Migrations
	Collections Collections
	Records     Records
	Batch       Batcher
	Indexes     Indexes
	CSV         CSV
	History     History
	Files       Files
	// engine/flags.
	Flags        Flags
	FlagSegments FlagSegments
	// engine/queue: queue jobs, their workers, scheduled jobs.
	Queues  Queues
	Workers Workers
	Jobs    Jobs
	// engine/webhooks.
	Webhooks Webhooks
	// engine/workflows.
	Workflows Workflows
	// Scripts are the hooks and custom routes (engine/jsvm).
	Scripts Scripts
	// engine/notify: device tokens, push providers.
	Notifications Notifications
	// engine/backup (nil: no backup routes).
	Backups Backups
	// SchemaMigrations takes, diffs and applies schema snapshots
	// (engine/migrations; nil: no migration routes).
	SchemaMigrations SchemaMigrations
	// RowImports imports records with their ids, times and password
	// hashes (engine/pbimport; nil: no import route).
	RowImports RowImports
	// engine/sqlconsole: the SQL console.
	SQL SQLConsole
	// The core's retention (nil: no retention routes).
	Retention Retention
	// engine/auth.
	Authenticator Authenticator
	UserAuth      UserAuth
	AuthFlows     AuthFlows
	Factors       SecondFactors
	Passkeys      Passkeys
	AdminAuth     AdminAuth
	Admins        AdminManager
	Auditor       Auditor
	// OAuth2 serves OAuth2 sign-in (nil: no OAuth2 routes).
	OAuth2 OAuth2Flows
	// MCP configures the agent protocol (engine/mcp); api.New fills its
	// Backend (this server's router) and Catalog (Collections).
	MCP mcp.Options

	Node  Node
	Stats StatsFunc
	// Metrics is the node's Prometheus figures (nil: a new set); the
	// server adds its HTTP families and serves it at /api/v1/metrics.
	Metrics *metrics.Set
	// SetupKey, when set, must be sent as X-Setup-Key to /admin/setup.
	SetupKey string
	// ClusterKey authenticates joins; Secrets returns what a joining node
	// receives (sealed under the key); Region labels this node.
	ClusterKey string
	Secrets    func() []byte
	Region     string
	// Digest hashes every table of the replica (admin cluster digest).
	Digest func(ctx context.Context) (map[string]string, uint64, error)
	Logger *slog.Logger
	// RateLimit installs the rate limiter (SVC_RATE_ENABLED; off when zero);
	// Fingerprints identify the signing and encryption keys (sha256:...;
	// encryption "" without a key).
	Fingerprints func() (jwt, encryption string)
	// TrustedProxies lists peers whose X-Forwarded-For is believed.
	RateLimit      bool
	TrustedProxies string
	// Realtime is the node's realtime hub (nil: no realtime routes).
	Realtime *realtime.Hub
	// BodyMinRate (bytes per second) and BodyGrace: how slowly a request
	// body may arrive (body_rate.go). Zero means the default (1024 B/s,
	// 10 s); a negative rate turns the check off.
	BodyMinRate int64
	// SSEKeepAlive is how often an idle SSE stream gets a comment line
	// (0: 25 s).
	SSEKeepAlive time.Duration
	BodyGrace    time.Duration
	// PublicDir, when set, is served at / (SVC_PUBLIC_DIR); PublicSPA
	// answers index.html for unmatched pages (SVC_PUBLIC_SPA).
	PublicDir string
	PublicSPA bool
	// Version is the build's version (the OpenAPI document's info.version;
	// "dev" when empty).
	Version string
	// Logs is the node's log folder (internal/logfile): request lines are
	// written to it and /admin/logs reads it (nil: neither).
	Logs LogFolder
}

// Server is the HTTP front of one node.
type Server struct {
	settings   SettingStore
	migrations Migrations
	colls      Collections
	records    Records
	batcher    Batcher
	indexes    Indexes
	csv        CSV
	history    History
	files      Files
	flags      Flags
	segments   FlagSegments
	queues     Queues
	workers    Workers
	jobs       Jobs
	webhooks   Webhooks
	workflows  Workflows
	scripts    Scripts
	notify     Notifications
	backups    Backups
	schemaMig  SchemaMigrations
	rowImports RowImports
	retention  Retention
	sql        SQLConsole
	authn      Authenticator
	users      UserAuth
	flows      AuthFlows
	factors    SecondFactors
	passkeys   Passkeys
	adminAuth  AdminAuth
	admins     AdminManager
	auditor    Auditor
	oauth2     OAuth2Flows
	node       Node
	stats      StatsFunc
	metrics    *metrics.Set
	setupKey   string
	clusterKey string
	secrets    func() []byte
	region     string
	digestFn   func(ctx context.Context) (map[string]string, uint64, error)
	log        *slog.Logger
	started    time.Time
	pid        int
	router     chi.Router
	rate       *rateLimiter // nil when off
	tracer     *tracing.Tracer
	prints     func() (jwt, encryption string)
	proxies    *proxyTrust
	rt         *realtime.Hub
	joins      *cluster.JoinVerifier
	// bodyMinRate (0: off) and bodyGrace bound slow bodies; budget holds
	// the memory charged by anonymous bodies (body_budget.go).
	bodyMinRate int64
	// sseKeepAlive: Options.SSEKeepAlive resolved.
	sseKeepAlive time.Duration
	// drain ends the open streams when the node shuts down (drain.go).
	drain     drainSignal
	bodyGrace time.Duration
	budget    *bodyBudget
	// mcp answers the agent protocol; mcpSessions signs its session ids.
	mcp         AgentProtocol
	mcpSessions *mcpSessions
	// version: Options.Version.
	version string
	// site serves Options.PublicDir (nil: off).
	site *publicSite
	// logs is the node's log folder (nil: no request lines, no log
	// routes); peers asks the other members for theirs (?node=all).
	logs  LogFolder
	peers *http.Client
}

// bodyLimits resolves Options.BodyMinRate and Options.BodyGrace.
func bodyLimits(rate int64, grace time.Duration) (int64, time.Duration) {
	switch {
	case rate == 0:
		rate = defaultBodyMinRate
	case rate < 0:
		rate = 0
	}
	if grace <= 0 {
		grace = defaultBodyGrace
	}
	return rate, grace
}

// New builds the router.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{
		settings: opts.Settings, migrations: opts.Migrations, colls: opts.Collections, records: opts.Records,
		batcher: opts.Batch, indexes: opts.Indexes, csv: opts.CSV, history: opts.History, files: opts.Files, webhooks: opts.Webhooks, workflows: opts.Workflows, scripts: opts.Scripts,
		flags: opts.Flags, segments: opts.FlagSegments,
		queues: opts.Queues, workers: opts.Workers, jobs: opts.Jobs, notify: opts.Notifications, backups: opts.Backups, sql: opts.SQL, schemaMig: opts.SchemaMigrations, rowImports: opts.RowImports, retention: opts.Retention,
		authn: opts.Authenticator, users: opts.UserAuth, flows: opts.AuthFlows, factors: opts.Factors, passkeys: opts.Passkeys, adminAuth: opts.AdminAuth,
		admins: opts.Admins, auditor: opts.Auditor, oauth2: opts.OAuth2, node: opts.Node, stats: opts.Stats, metrics: newMetricSet(opts.Metrics), setupKey: opts.SetupKey,
		clusterKey: opts.ClusterKey, secrets: opts.Secrets, region: opts.Region, digestFn: opts.Digest,
		log: opts.Logger, started: time.Now(), pid: os.Getpid(), prints: opts.Fingerprints, rt: opts.Realtime,
	}
	s.rate, s.proxies = newRateLimiter(opts.RateLimit, opts.Logger), newProxyTrust(opts.TrustedProxies, opts.Logger)
	if opts.Settings != nil {
		s.tracer = tracing.New(opts.Settings.Setting, opts.Node.NodeID(), opts.Logger)
		// The node traces the writes it leads for followers with the
		// same settings (cluster/trace.go).
		if tn, ok := opts.Node.(interface{ SetTracer(cluster.TracerSource) }); ok {
			tn.SetTracer(s.tracer.Get)
		}
	}
	s.joins = cluster.NewJoinVerifier(opts.ClusterKey, opts.Node.NodeID(), time.Now())
	s.bodyMinRate, s.bodyGrace = bodyLimits(opts.BodyMinRate, opts.BodyGrace)
	s.sseKeepAlive = opts.SSEKeepAlive
	s.drain = newDrainSignal()
	if s.sseKeepAlive <= 0 {
		s.sseKeepAlive = defaultSSEKeepAlive
	}
	s.budget = &bodyBudget{}
	s.version = opts.Version
	if s.version == "" {
		s.version = "dev"
	}
	site, err := newPublicSite(opts.PublicDir, opts.PublicSPA)
	if err != nil {
		opts.Logger.Error("public directory not served", "dir", opts.PublicDir, "err", err)
	}
	s.site = site
	s.logs, s.peers = opts.Logs, &http.Client{Timeout: peerLogsTimeout}
	mo := opts.MCP
	mo.Backend, mo.Catalog = mcpBackend{s}, opts.Collections
	if mo.Logger == nil {
		mo.Logger = opts.Logger
	}
	s.mcp, s.mcpSessions = mcp.New(mo), newMCPSessions(opts.Secrets)
	r := chi.NewRouter()
	r.Use(s.writeRequestLog, s.countRequests, s.recoverer, s.traceRequests, s.nodeHeader, s.bodyRate, s.logRequests, s.cors, middleware.GetHead, s.rateLimit)
	s.mountHealth(r)
	r.Get("/_/join", s.joinInfo)
	r.Post("/_/join", s.join)
	// The dashboard under /_/: chi matches the probes' and /_/join's
	// static paths before this catch-all, and the dashboard answers only
	// its own routes (any other path is a 404).
	dash := dashboard.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errRouteNotFound)
	}))
	r.Get(dashboard.Prefix, dash.ServeHTTP)
	r.Get(dashboard.Prefix+"*", dash.ServeHTTP)
	s.mountRealtime(r)
	// The Prometheus endpoint is outside /api/v1's group: a scrape of a
	// node still catching up must answer, and it has its own token.
	r.Get("/api/v1/metrics", s.prometheus)
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(s.requireCaughtUp, s.consistency)
		// Signing in takes no credentials: a stale token sent along must
		// not stop a client from getting a fresh one.
		s.mountAdminAuth(r)
		s.mountUserAuthOpen(r)
		s.mountAuthFlowsOpen(r)
		s.mountPasskeysOpen(r)
		s.mountRealtimeSSE(r)
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate)
			s.mountUserAuth(r)
			s.mountAuthFlows(r)
			s.mountOAuth2(r)
			s.mountPasskeys(r)
		})
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate, s.audit, s.requireRole)
			s.mountAdmins(r)
			s.mountCollections(r)
			s.mountIndexes(r)
			s.mountCluster(r)
			s.mountSettings(r)
			s.mountMetrics(r)
			s.mountCSV(r)
			s.mountFlags(r)
			s.mountFlagSegments(r)
			s.mountQueues(r)
			s.mountWorkers(r)
			s.mountJobs(r)
			s.mountWebhooks(r)
			s.mountWorkflows(r)
			s.mountScripts(r)
			s.mountNotifications(r)
			s.mountBackups(r)
			s.mountMigrations(r)
			s.mountImportRows(r)
			s.mountRetention(r)
			s.mountSQL(r)
			s.mountLogs(r)
			s.mountFilesAdmin(r)
		})
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate)
			s.mountFlagsPublic(r)
			s.mountNotificationDevices(r)
			s.mountOpenAPI(r)
		})
		r.Group(func(r chi.Router) {
			// The agent protocol: API tokens with mcp:* scopes; each tool
			// goes back through the routes below as the token's admin.
			r.Use(s.authenticate)
			s.mountMCP(r)
		})
		r.Group(func(r chi.Router) {
			// Custom routes: the code's helpers check each collection's
			// scopes and rules as the record routes do.
			r.Use(s.authenticate)
			s.mountCustom(r)
		})
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate) // scopes are checked per entry
			s.mountBatch(r)
		})
		r.Group(func(r chi.Router) {
			// Files check scopes per collection themselves: their paths
			// name it after /files/ (or not at all: downloads).
			r.Use(s.authenticate)
			s.mountFiles(r)
		})
		r.Group(func(r chi.Router) {
			r.Use(s.authenticate, s.requireRecordScope)
			s.mountRecords(r)
		})
	})
	// PocketBase's API (api/pbcompat): its own authentication (a bad
	// token is a guest), errors and shapes over the same engine calls.
	r.Group(func(r chi.Router) {
		r.Use(s.requireCaughtUp, s.pbConsistency, s.consistency, s.pbRealtimeMark)
		pbcompat.Mount(r, s.pbDeps())
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		if s.site.claims(r) && s.site.serve(w, r) {
			return
		}
		if s.pbServes(r) {
			pbcompat.WriteError(w, r, pbcompat.NewError(http.StatusNotFound, "", nil))
			return
		}
		s.writeError(w, r, errRouteNotFound)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		if allow := s.allowedMethods(r.URL.Path); allow != "" {
			w.Header().Set("Allow", allow)
		}
		if s.pbServes(r) {
			pbcompat.WriteError(w, r, pbcompat.NewError(http.StatusMethodNotAllowed, "", nil))
			return
		}
		s.writeError(w, r, errMethodNotAllowed)
	})
	s.router = r
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// allowedMethods lists the methods the router serves for path, for the
// Allow header of a 405.
func (s *Server) allowedMethods(path string) string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if s.router.Match(chi.NewRouteContext(), m, path) {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead) // served by GetHead
			}
		}
	}
	return strings.Join(allow, ", ")
}
