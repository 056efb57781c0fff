package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"svcd/cluster"
	"svcd/cmd/svcd/stack"
)

// config is everything `svcd serve` reads from flags and the environment.
type config struct {
	dataDir    string
	httpAddr   string
	nodeID     string
	raftAddr   string
	bootstrap  bool
	join       string
	gossip     string
	clusterKey string
	region     string
	nonVoter   bool
	reseed     bool // the join asks to be removed and added back (reseed_start.go)
	reusePort  bool
	tls        cluster.TLSFiles
	logLevel   slog.Level // SVC_LOG_LEVEL
	logFormat  string     // --log-format, SVC_LOG_FORMAT: text, json or "" (by the output)
	noBanner   bool       // --no-banner
	// applySnapshot (--apply-snapshot) is a schema snapshot file applied
	// once the node is ready, in snapshotMode (--snapshot-mode).
	applySnapshot string
	snapshotMode  string
	jwtSecret     string
	encKey        string   // SVC_ENCRYPTION_KEY
	encKeyOld     []string // SVC_ENCRYPTION_KEY_OLD, comma-separated
	setupKey      string
	rateLimit     bool   // SVC_RATE_ENABLED, on unless "0"
	proxies       string // SVC_TRUSTED_PROXIES
	// bodyMinRate (SVC_BODY_MIN_RATE, bytes/s, 0 = off) and bodyGrace
	// (SVC_BODY_GRACE): how slowly a request body may arrive.
	bodyMinRate int64
	bodyGrace   time.Duration
	// publicDir (SVC_PUBLIC_DIR) is served at /; publicSPA
	// (SVC_PUBLIC_SPA=1) answers its index.html for unmatched pages.
	publicDir string
	publicSPA bool

	snapshotThreshold uint64
	snapshotInterval  time.Duration
	trailingLogs      uint64
	minFreeBytes      uint64
	raftTiming        cluster.Timing // SVC_RAFT_*_TIMEOUT (raft_timing.go)
	progressInterval  time.Duration  // SVC_PROGRESS_INTERVAL (progress.go)
}

// defaultDataDir is the data directory a command uses without --dir:
// SVC_DATA_DIR, else ./svc_data, made absolute.
func defaultDataDir() string {
	d, err := filepath.Abs(envOr("SVC_DATA_DIR", "./svc_data"))
	if err != nil {
		return envOr("SVC_DATA_DIR", "./svc_data")
	}
	return d
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// serveFlagSet declares svcd serve's flags into c (the defaults come from
// the environment).
func serveFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	port := envOr("SVC_PORT", "8090")
	fs.StringVar(&c.httpAddr, "http", ":"+port, "`ADDR` to serve HTTP on, [host]:port (overrides SVC_PORT)")
	fs.StringVar(&c.dataDir, "dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	fs.StringVar(&c.nodeID, "node-id", os.Getenv("SVC_NODE_ID"), "stable node `ID` (SVC_NODE_ID; generated once if empty)")
	fs.StringVar(&c.raftAddr, "raft-addr", os.Getenv("SVC_RAFT_ADDR"), "Raft TCP address, `HOST:PORT` (SVC_RAFT_ADDR; none: single-node)")
	fs.BoolVar(&c.bootstrap, "bootstrap", os.Getenv("SVC_BOOTSTRAP") == "1", "form a new cluster with this node as its only voter")
	fs.StringVar(&c.join, "join", os.Getenv("SVC_JOIN"), "members to join: a comma list of their HTTP `URL,...` (SVC_JOIN)")
	fs.StringVar(&c.gossip, "gossip-addr", os.Getenv("SVC_GOSSIP_ADDR"), "gossip address, `HOST:PORT` (SVC_GOSSIP_ADDR)")
	fs.StringVar(&c.region, "region", os.Getenv("SVC_REGION"), "region label, `NAME` (SVC_REGION)")
	fs.StringVar(&c.tls.Cert, "tls-cert", os.Getenv("SVC_TLS_CERT"), "certificate `FILE` for mutual TLS between nodes (SVC_TLS_CERT)")
	fs.StringVar(&c.tls.Key, "tls-key", os.Getenv("SVC_TLS_KEY"), "its private key `FILE` (SVC_TLS_KEY)")
	fs.StringVar(&c.tls.CA, "tls-ca", os.Getenv("SVC_TLS_CA"), "`FILE` of the CA that signs every node's certificate (SVC_TLS_CA)")
	fs.BoolVar(&c.reusePort, "reuse-port", false, "share the HTTP port with other processes (SO_REUSEPORT; used by svcd cluster)")
	fs.BoolVar(&c.nonVoter, "non-voter", os.Getenv("SVC_NON_VOTER") == "1", "join as a non-voting read replica")
	fs.StringVar(&c.logFormat, "log-format", os.Getenv("SVC_LOG_FORMAT"), logFlagUsage)
	fs.BoolVar(&c.noBanner, "no-banner", false, "print no start banner (svcd cluster prints one for all its nodes)")
	fs.StringVar(&c.applySnapshot, "apply-snapshot", "", "schema snapshot `FILE` to apply through the log once the node is ready (docs/operations.md#migrations)")
	fs.StringVar(&c.snapshotMode, "snapshot-mode", "additive", "how --apply-snapshot applies: `MODE` additive (create and extend) or sync (also change and drop)")
	return fs
}

func parseServeFlags(args []string) (*config, error) {
	c := &config{}
	fs := serveFlagSet(c)
	if err := parseArgs(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkLogFormat(c.logFormat); err != nil {
		return nil, &usageError{msg: "--log-format: " + err.Error()}
	}
	c.clusterKey = os.Getenv("SVC_CLUSTER_KEY")
	switch {
	case c.raftAddr != "" && c.clusterKey == "":
		return nil, errors.New("serve: SVC_CLUSTER_KEY is required with --raft-addr (it authenticates every node)")
	case c.join != "" && c.raftAddr == "":
		return nil, errors.New("serve: --join needs --raft-addr")
	case c.gossip != "" && c.raftAddr == "":
		return nil, errors.New("serve: --gossip-addr needs --raft-addr")
	case c.join != "" && c.bootstrap:
		return nil, errors.New("serve: --bootstrap forms a new cluster; --join joins one: give one of them")
	case c.snapshotMode != "additive" && c.snapshotMode != "sync":
		return nil, usageErrorf("--snapshot-mode: %q is not additive or sync", c.snapshotMode)
	}
	lo, err := logEnv(slog.LevelInfo)
	if err != nil {
		return nil, err
	}
	c.logLevel = lo.level
	c.jwtSecret = os.Getenv("SVC_JWT_SECRET")
	c.encKey, c.encKeyOld = encryptionKeys()
	c.setupKey = os.Getenv("SVC_SETUP_KEY")
	c.rateLimit, c.proxies = os.Getenv("SVC_RATE_ENABLED") != "0", os.Getenv("SVC_TRUSTED_PROXIES")
	if c.publicDir, c.publicSPA, err = publicDirEnv(); err != nil {
		return nil, err
	}
	if c.snapshotThreshold, err = envUint("SVC_RAFT_SNAPSHOT_THRESHOLD"); err != nil {
		return nil, err
	}
	if c.trailingLogs, err = envUint("SVC_RAFT_TRAILING_LOGS"); err != nil {
		return nil, err
	}
	if c.minFreeBytes, err = envUint("SVC_MIN_FREE_BYTES"); err != nil {
		return nil, err
	}
	if v := os.Getenv("SVC_RAFT_SNAPSHOT_INTERVAL"); v != "" {
		if c.snapshotInterval, err = time.ParseDuration(v); err != nil {
			return nil, fmt.Errorf("SVC_RAFT_SNAPSHOT_INTERVAL: %w", err)
		}
	}
	if c.raftTiming, err = raftTimingEnv(); err != nil {
		return nil, err
	}
	if c.bodyMinRate, c.bodyGrace, err = bodyRateEnv(); err != nil {
		return nil, err
	}
	if c.progressInterval, err = progressIntervalEnv(); err != nil {
		return nil, err
	}
	if c.dataDir, err = filepath.Abs(c.dataDir); err != nil {
		return nil, err
	}
	if c.raftAddr != "" && !c.bootstrap && c.join == "" && c.jwtSecret == "" && !hasRaftState(c.dataDir) && !reseedPending(c.dataDir) {
		return nil, errors.New("serve: a new cluster node needs --bootstrap (to form a cluster) or --join (which also " +
			"hands it the token signing key); to add it through the admin API instead, set the same SVC_JWT_SECRET on every node")
	}
	return c, nil
}

// bodyRateEnv reads SVC_BODY_MIN_RATE (bytes per second; 0 turns the
// check off; unset: api's default) and SVC_BODY_GRACE (a Go duration;
// unset: api's default) as api.Options wants them.
func bodyRateEnv() (rate int64, grace time.Duration, err error) {
	if v := os.Getenv("SVC_BODY_MIN_RATE"); v != "" {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 63)
		if err != nil {
			return 0, 0, fmt.Errorf("SVC_BODY_MIN_RATE: %w", err)
		}
		rate = int64(n)
		if rate == 0 {
			rate = -1 // off
		}
	}
	if v := os.Getenv("SVC_BODY_GRACE"); v != "" {
		if grace, err = time.ParseDuration(v); err != nil || grace <= 0 {
			return 0, 0, fmt.Errorf("SVC_BODY_GRACE: want a positive Go duration such as 10s, got %q", v)
		}
	}
	return rate, grace, nil
}

func envUint(key string) (uint64, error) {
	v := os.Getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return n, nil
}

func (c *config) stackConfig() stack.Config {
	return stack.Config{
		DataDir: c.dataDir, NodeID: c.nodeID, RaftAddr: c.raftAddr, Bootstrap: c.bootstrap, ClusterKey: c.clusterKey,
		HTTPAddr: advertisedHTTP(c.httpAddr, c.raftAddr), Region: c.region, GossipAddr: c.gossip, TLS: c.tls,
		JWTSecret: c.jwtSecret, EncryptionKey: c.encKey, EncryptionKeyOld: c.encKeyOld, SnapshotThreshold: c.snapshotThreshold,
		SnapshotInterval: c.snapshotInterval, TrailingLogs: c.trailingLogs, RaftTiming: c.raftTiming, MinFreeBytes: c.minFreeBytes,
		ProgressInterval: c.progressInterval,
	}
}

// advertisedHTTP is the HTTP address other members are told: the listen
// address, with the Raft address's host when it listens on all interfaces.
func advertisedHTTP(httpAddr, raftAddr string) string {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return httpAddr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		if rh, _, err := net.SplitHostPort(raftAddr); err == nil && rh != "" {
			host = rh
		} else {
			host = "127.0.0.1"
		}
	}
	return net.JoinHostPort(host, port)
}

// encryptionKeys reads SVC_ENCRYPTION_KEY and SVC_ENCRYPTION_KEY_OLD.
func encryptionKeys() (current string, old []string) {
	for _, k := range strings.Split(os.Getenv("SVC_ENCRYPTION_KEY_OLD"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			old = append(old, k)
		}
	}
	return strings.TrimSpace(os.Getenv("SVC_ENCRYPTION_KEY")), old
}

// publicDirEnv reads SVC_PUBLIC_DIR (a folder that must exist) and
// SVC_PUBLIC_SPA (1 or 0).
func publicDirEnv() (dir string, spa bool, err error) {
	dir = strings.TrimSpace(os.Getenv("SVC_PUBLIC_DIR"))
	switch v := strings.TrimSpace(os.Getenv("SVC_PUBLIC_SPA")); v {
	case "", "0":
	case "1":
		spa = true
	default:
		return "", false, fmt.Errorf("SVC_PUBLIC_SPA: want 1 or 0, got %q", v)
	}
	if dir == "" {
		if spa {
			return "", false, errors.New("SVC_PUBLIC_SPA=1 needs SVC_PUBLIC_DIR")
		}
		return "", false, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", false, fmt.Errorf("SVC_PUBLIC_DIR: %w", err)
	}
	if !st.IsDir() {
		return "", false, fmt.Errorf("SVC_PUBLIC_DIR: %s is not a folder", dir)
	}
	return dir, spa, nil
}
