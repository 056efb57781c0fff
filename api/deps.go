package api

import (
	"context"
	"time"

	"svcd/cluster"
)

// Node is what the HTTP layer needs from the consensus layer.
type Node interface {
	NodeID() string
	State() string
	LeaderID() string
	Ready() bool
	CaughtUp() bool
	WaitIndex(ctx context.Context, idx uint64) error
	ReadIndex(ctx context.Context) (uint64, error)
	AckedIndex() uint64
	Join(ctx context.Context, j cluster.JoinRequest) error
	Servers() ([]cluster.Server, error)
	AddServer(ctx context.Context, id, addr string, voter bool) error
	RemoveServer(ctx context.Context, id string) error
	TransferLeadership(ctx context.Context, id string) (cluster.Transfer, error)
	MemberHTTPAddr(ctx context.Context, id string) string
	Snapshot() (index, term uint64, size int64, err error)
	Stats() cluster.Stats
	LastContact() time.Duration
	MemberStatus(ctx context.Context, timeout time.Duration) map[string]cluster.Status
	GossipStates() map[string]string
	Storage() cluster.StorageStatus
}

// StatsFunc returns the figures of the admin metrics snapshot.
type StatsFunc func() map[string]any
