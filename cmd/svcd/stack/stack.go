// Package stack assembles one node: the SQLite state machine, the engine
// that registers its command handlers, the Raft node and the leader loop.
// The svcd command runs it; system tests start it in-process.
package stack

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"svcd/engine/files/thumb"
	"sync"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"svcd/api/egress"
	"svcd/api/oauth2client"
	"svcd/cluster"
	"svcd/cluster/blobs"
	"svcd/engine"
	"svcd/engine/backup"
	"svcd/engine/crypt"
	"svcd/engine/jsvm"
	"svcd/engine/password"
	"svcd/engine/token"
	"svcd/fsm"
	"svcd/internal/logfile"
	"svcd/realtime"
	"svcd/scheduler"
)

// Config is what a node needs to start.
type Config struct {
	DataDir    string
	NodeID     string // generated and kept in DataDir/node-id when empty
	RaftAddr   string // empty: single-node mode
	Bootstrap  bool
	ClusterKey string
	HTTPAddr   string // advertised to the other members
	Region     string
	GossipAddr string
	TLS        cluster.TLSFiles
	JWTSecret  string // empty: DataDir/jwt.key, generated on first start
	// EncryptionKey (SVC_ENCRYPTION_KEY) seals secret settings and
	// encrypted fields; empty: DataDir/encryption.key if a join left one,
	// else none. EncryptionKeyOld (SVC_ENCRYPTION_KEY_OLD) may still open.
	EncryptionKey    string
	EncryptionKeyOld []string

	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// RaftTiming is Raft's failure detection with peers
	// (cluster.Config.Timing; SVC_RAFT_*_TIMEOUT).
	RaftTiming cluster.Timing
	// MinFreeBytes is the free-space floor below which the node takes no
	// write (cluster.Config.MinFreeBytes; SVC_MIN_FREE_BYTES).
	MinFreeBytes uint64

	// PasswordParams override the argon2id costs (tests use cheap ones).
	PasswordParams password.Params
	// OnStall, when set, is told when the state machine stops applying at
	// an entry it cannot apply (fsm/stall.go; the store logs it anyway).
	OnStall func(fsm.Stall)
	// Clock is the node's wall clock (nil: time.Now): the times the engine
	// resolves before proposing (record and token times, expiries, OTP
	// and MFA windows, lockouts, revocations), token verification, and the
	// realtime hub's (replay ring, credential expiries, presence). Tests
	// inject a fake one to move time instead of sleeping. The fault
	// build's clock skew is added to the engine's times only, as without
	// a Clock. Raft's timers, HTTP deadlines and the rate limiter keep
	// real time; the state machine reads no clock.
	Clock func() time.Time
	// ProgressInterval is the time between two progress lines of long
	// work (a CSV import or export, a snapshot written or restored);
	// 0: progress.DefaultInterval (5 s). Tests make it short.
	ProgressInterval time.Duration
	// WebhookInterval is the webhook dispatcher's tick (0: SPEC.md's 2 s).
	// Tests of retries make it short.
	WebhookInterval time.Duration
	// RetentionFirst is the wait between becoming leader and the first
	// pruning (0: a minute; tests shorten it).
	RetentionFirst time.Duration
	// PushRoots are the certificate roots APNs connections trust (nil:
	// the system's). Tests set their local APNs server's.
	PushRoots *x509.CertPool
	// Logs is the node's log folder, when the caller opened it (svcd
	// serve, to tee its slog lines into it; the caller closes it). Nil:
	// the stack opens LogsDir(DataDir) with Clock and closes it.
	Logs *logfile.Dir
}

// LogsDir is the log folder of a data directory: one JSONL file per UTC
// day (internal/logfile).
func LogsDir(dataDir string) string { return filepath.Join(dataDir, "logs") }

// Stack is one node's state machine, domain and consensus, wired together.
type Stack struct {
	Store *fsm.Store
	// Domain is the engine's core and its modules (domain.go).
	*Domain
	Node *cluster.Node
	// Realtime fans the committed record events out to this node's
	// WebSocket and SSE clients.
	Realtime *realtime.Hub
	// Logs is the node's log folder: request lines, slog lines (when the
	// caller tees them), /admin/logs and the agent protocol's read_logs.
	Logs *logfile.Dir
	// Metrics holds this node's Prometheus figures (metrics.go); the HTTP
	// layer adds its own and serves them.
	Metrics *metrics.Set

	log        *slog.Logger
	ownLogs    bool // Logs was opened by Open, so Close closes it
	cancel     context.CancelFunc
	done       chan struct{}
	signingKey []byte
	keyring    *crypt.Keyring
	blobs      *blobs.Stores
}

// fileCollectInterval is how often the files' collector looks for bytes
// no record references (engine/files/collect.go).
const fileCollectInterval = time.Minute

// fileRepairInterval is how often a node looks for the blobs of the local
// store it lacks and copies them from its peers (cluster/blobs/repair.go),
// once the quick passes after its start are done. A download of a missing
// blob fetches it at once; this pass only fills the store.
const fileRepairInterval = 5 * time.Minute

// Secrets is what a node joining this one receives (sealed under the
// cluster key): the token signing key, so a token issued by one node is
// valid on every node, and the encryption key, so every node opens what
// any node sealed.
func (s *Stack) Secrets() []byte {
	m := map[string]string{"jwt_key": hex.EncodeToString(s.signingKey)}
	if s.keyring != nil {
		m["enc_key"] = hex.EncodeToString(s.keyring.Current())
	}
	b, _ := json.Marshal(m)
	return b
}

// Open opens the database, registers the engine's handlers, starts Raft
// (replaying the log into the state machine) and the leader loop.
func Open(cfg Config, log *slog.Logger) (*Stack, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	id, err := nodeID(cfg.DataDir, cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("node id: %w", err)
	}
	key, err := signingKey(cfg.DataDir, cfg.JWTSecret, log)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	faults, engineClock := faultHooks(log, cfg.DataDir, cfg.Clock)
	signer, err := token.NewSigner(key, token.WithClock(cfg.Clock))
	if err != nil {
		return nil, err
	}
	store, err := fsm.Open(fsm.Options{
		Path:             filepath.Join(cfg.DataDir, "data.db"),
		Registry:         fsm.NewRegistry(),
		Logger:           log,
		OnStall:          cfg.OnStall,
		ProgressInterval: cfg.ProgressInterval,
	})
	if err != nil {
		return nil, repairHint(cfg, err)
	}
	ring, err := keyring(cfg, log)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("encryption key: %w", err)
	}
	// The guard reads the replicated settings; it dials only after the
	// engine exists.
	var eng *engine.Engine
	guard := egress.New(func(k string) string { return eng.Setting(k) })
	// The blob stores read the replicated settings (s3.*) only when a file
	// is stored or served, after the engine exists.
	stores := blobs.New(filepath.Join(cfg.DataDir, "storage"), func(k string) string { return eng.Setting(k) })
	// The local store replicates through the Raft node, opened below.
	var node *cluster.Node
	replicated := blobs.NewReplicated(stores, nodePeers{func() *cluster.Node { return node }}, log)
	thumbs, err := thumb.NewCache(filepath.Join(cfg.DataDir, "thumbs"), 0)
	if err != nil {
		store.Close()
		return nil, err
	}
	// A restore's file is copied to the peers over the same channel,
	// into the data directory's restores/ (engine/backup).
	restores := filepath.Join(cfg.DataDir, "restores")
	bk := backup.Options{Dir: restores, Peers: backupPeers{replicated.AddDir("restores", restores)},
		Targets: backupTargets{func(k string) string { return eng.Setting(k) }}, NodeID: id}
	// Code's HTTP goes through the guard (helpers.http) or raw
	// (helpers.fetch); the node's id is known once Raft is open.
	scripts := jsvm.ModuleOptions{HTTP: guard, Fetch: egress.NewUnguarded(), Env: os.Getenv,
		NodeID: func() string {
			if node == nil {
				return id
			}
			return node.NodeID()
		}}
	dom, err := NewDomain(DomainOptions{Signer: signer, ProgressInterval: cfg.ProgressInterval, Blobs: fileStores{stores, replicated}, Thumbnails: thumbnails{thumbs}, WebhookSender: newWebhookSender(guard), Scripts: scripts, OAuth2: oauth2client.New(guard.Client()), Push: newPusher(guard, cfg.PushRoots), Backup: bk, Options: engine.Options{Store: store, Logger: log, PasswordParams: cfg.PasswordParams, Clock: engineClock, Outbound: guard, Keyring: ring}})
	if err != nil {
		store.Close()
		return nil, err
	}
	eng = dom.Engine
	hub := realtime.NewHub(realtime.Options{Auth: realtime.EngineAuthorizer(eng, dom.Auth), Retention: eng.RealtimeRetention, StartIndex: store.AppliedIndex(), Clock: cfg.Clock})
	store.Observe(hub.Observe)
	figures := metrics.NewSet()
	node, err = cluster.Open(cluster.Config{
		NodeID:            id,
		Dir:               filepath.Join(cfg.DataDir, "raft"),
		RaftAddr:          cfg.RaftAddr,
		Bootstrap:         cfg.Bootstrap,
		ClusterKey:        cfg.ClusterKey,
		HTTPAddr:          cfg.HTTPAddr,
		Region:            cfg.Region,
		GossipAddr:        cfg.GossipAddr,
		TLS:               cfg.TLS,
		Codec:             eng,
		SnapshotThreshold: cfg.SnapshotThreshold,
		SnapshotInterval:  cfg.SnapshotInterval,
		TrailingLogs:      cfg.TrailingLogs,
		Timing:            cfg.RaftTiming,
		MinFreeBytes:      cfg.MinFreeBytes,
		Faults:            faults,
		BlobServer:        replicated.Serve,
		OnApply:           newApplyTimer(figures),
		Logger:            log,
	}, store)
	if err != nil {
		store.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (is another svcd running on %s?)", err, cfg.DataDir)
		}
		return nil, repairHint(cfg, err)
	}
	eng.SetProposer(node)
	// Presence is gossiped, not logged: the hub's registry talks to the
	// other nodes through memberlist.
	node.SetGossipHandler(hub.Presence().Attach(node.NodeID(), node))
	ctx, cancel := context.WithCancel(context.Background())
	s := &Stack{Store: store, Domain: dom, Node: node, Realtime: hub, log: log, cancel: cancel, done: make(chan struct{}), signingKey: key, keyring: ring, blobs: stores, Metrics: figures}
	s.registerFigures(figures, filepath.Join(cfg.DataDir, "raft"))
	s.Logs = cfg.Logs
	if s.Logs == nil {
		s.Logs, s.ownLogs = logfile.Open(LogsDir(cfg.DataDir), logfile.Options{Now: cfg.Clock}), true
	}
	subs := append([]scheduler.Subsystem{&scheduler.Migrator{M: eng, Log: log},
		&scheduler.WebhookDispatcher{Outbox: webhookOutbox{dom.Webhooks}, Log: log, NodeID: id, Lead: node, Interval: cfg.WebhookInterval}},
		dom.queueSubsystems(node.NodeID(), log)...)
	subs = append(subs, &scheduler.Workflows{W: dom.Workflows, Log: log}, scheduler.NewBackups(dom.Backups, log),
		&scheduler.Retention{Job: dom.Retention, Log: log, First: cfg.RetentionFirst})
	loop := scheduler.NewLoop(node, log, 0, subs...)
	collector := dom.Files.Collector()
	var work sync.WaitGroup
	work.Add(3)
	go func() { defer work.Done(); loop.Run(ctx) }()
	go func() { defer work.Done(); collector.Run(ctx, node.IsLeader, fileCollectInterval) }()
	go func() {
		defer work.Done()
		replicated.Repair(ctx, dom.Files.LocalFiles, eng.Migrated, fileRepairInterval)
	}()
	go func() { work.Wait(); close(s.done) }()
	return s, nil
}

// WaitReady waits until the node has a leader, has caught up and is
// migrated.
func (s *Stack) WaitReady(ctx context.Context) error {
	if err := s.Node.WaitReady(ctx); err != nil {
		return err
	}
	for !s.Engine.Migrated() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Close stops leader work, then Raft (handing leadership over if this node
// leads others), then the database.
func (s *Stack) Close() error {
	s.cancel()
	<-s.done
	s.Realtime.Presence().Close()
	err := errors.Join(s.Node.Shutdown(), s.Store.Close(), s.blobs.Close())
	if s.ownLogs {
		err = errors.Join(err, s.Logs.Close())
	}
	return err
}

// Stats is the admin metrics snapshot.
func (s *Stack) Stats() map[string]any {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	bs := s.Store.BatchStats()
	st := s.Node.Stats()
	return map[string]any{
		"process_cpu_seconds":    cpu,
		"fsm_batches_total":      bs.Batches,
		"fsm_commands_total":     bs.Commands,
		"fsm_batch_commands_p50": bs.P50,
		"fsm_batch_commands_p99": bs.P99,
		"fsm_applied_index":      s.Store.AppliedIndex(),
		"raft_commit_index":      st.CommitIndex,
		"raft_applied_index":     st.AppliedIndex,
		"raft_last_index":        st.LastIndex,
		"raft_term":              st.Term,
		"raft_state":             s.Node.State(),
	}
}

// Digest hashes every table of this replica in one read transaction and
// returns the applied index it reflects.
func (s *Stack) Digest(ctx context.Context) (map[string]string, uint64, error) {
	d, applied, err := s.Store.DigestAt(ctx)
	if err != nil {
		return nil, 0, err
	}
	// The meta table holds the applied index itself: leave it out so
	// replicas at different indexes compare on data alone.
	delete(d, "table:_svc_meta")
	return d, applied, nil
}

// Fingerprints identify the token signing key and the encryption key
// without revealing them: "sha256:<hex>"; encryption is "" without a key.
func (s *Stack) Fingerprints() (jwt, encryption string) {
	sum := sha256.Sum256(s.signingKey)
	if s.keyring != nil {
		encryption = s.keyring.Fingerprint()
	}
	return "sha256:" + hex.EncodeToString(sum[:]), encryption
}
