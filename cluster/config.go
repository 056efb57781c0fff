package cluster

import (
	"log/slog"
	"net"
	"time"
)

// Config configures a Node.
type Config struct {
	// NodeID is this node's stable Raft server id.
	NodeID string
	// Dir holds the Raft log (raft.db) and the snapshots/ folder.
	Dir string
	// RaftAddr is the TCP address to bind and advertise for Raft. Empty
	// means single-node mode over an in-memory transport: nothing listens.
	RaftAddr string
	// ClusterKey authenticates Raft connections (a mutual handshake with a
	// key derived from it). Required for more than one node.
	ClusterKey string
	// Bootstrap makes this node form a new cluster with itself as the only
	// voter when it has no Raft state yet. Single-node mode always does.
	Bootstrap bool

	// SnapshotThreshold is how many new log entries trigger a snapshot.
	SnapshotThreshold uint64
	// SnapshotInterval is how often the threshold is checked.
	SnapshotInterval time.Duration
	// TrailingLogs is how many entries stay in the log after a snapshot.
	TrailingLogs uint64
	// Timing is Raft's failure detection with peers (timing.go; zero
	// fields: defaults). Single-node mode ignores it.
	Timing Timing
	// TLS, when given, wraps Raft and RPC connections in mutual TLS.
	TLS TLSFiles
	// GossipAddr, when set, binds memberlist there (needs ClusterKey).
	GossipAddr string
	// HTTPAddr and Region describe this node to the others (cluster view).
	HTTPAddr string
	Region   string
	// Codec carries command results between nodes (required to forward).
	Codec ResultCodec
	// LeaderWait bounds how long Apply waits for a leader (default 5 s).
	LeaderWait time.Duration
	// MinFreeBytes is the free-space floor of the Raft directory's and the
	// database's file systems, below which the node takes no write
	// (storage.go; default DefaultMinFreeBytes).
	MinFreeBytes uint64
	// BlobServer, when set, serves the connections other nodes open to
	// push or fetch the bytes of files (DialBlob); it owns the
	// connection, which has passed the cluster-key handshake (and TLS
	// when configured), until it returns.
	BlobServer func(c net.Conn)
	// OnApply, when set, is told how long the state machine took to apply
	// each batch of log entries (the metrics' apply latency); it runs on
	// the apply goroutine and must not block.
	OnApply func(entries int, took time.Duration)
	// Faults are test-only defects (see Faults); zero in production.
	Faults Faults

	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = 30 * time.Second
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.MinFreeBytes == 0 {
		c.MinFreeBytes = DefaultMinFreeBytes
	}
	if c.LeaderWait == 0 {
		c.LeaderWait = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// SingleNode reports whether the node runs without a network transport.
func (c *Config) SingleNode() bool { return c.RaftAddr == "" }
