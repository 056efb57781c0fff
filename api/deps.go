package api

import (
	"context"
	"time"

	"svcd/cluster"

	"svcd/engine"
	"svcd/engine/schema"
)

// Engine is what the HTTP layer needs from the domain.
type Engine interface {
	authFlowsEngine
	Authenticate(ctx context.Context, raw string) (engine.Principal, error)
	Register(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error)
	LoginUser(ctx context.Context, coll, email, password, ip string) (*engine.UserSession, error)
	Refresh(ctx context.Context, p engine.Principal) (*engine.RefreshedSession, uint64, error)
	Logout(ctx context.Context, p engine.Principal) (uint64, error)
	LockoutEnabled() bool
	HasAdmin() bool
	SetupAdmin(ctx context.Context, email, password string, client engine.ClientInfo) (*engine.AdminSession, uint64, error)
	LoginAdmin(ctx context.Context, email, password string, client engine.ClientInfo) (*engine.AdminSession, error)
	Admins() []*engine.Admin
	AdminByID(id string) *engine.Admin
	CreateAdmin(ctx context.Context, caller engine.Principal, email, password, role string) (*engine.Admin, uint64, error)
	UpdateAdmin(ctx context.Context, caller engine.Principal, id string, p engine.AdminPatch) (*engine.Admin, uint64, error)
	DeleteAdmin(ctx context.Context, id string) (uint64, error)
	LogoutAllAdmins(ctx context.Context) (uint64, error)
	AdminSessions(ctx context.Context) ([]engine.AdminSessionInfo, error)
	RevokeAdminSession(ctx context.Context, jti string) (uint64, error)
	MintAPIToken(ctx context.Context, caller engine.Principal, name string, scopes []string, ttlSeconds int64) (*engine.MintedToken, uint64, error)
	APITokens() []*engine.APIToken
	DeleteAPIToken(ctx context.Context, id string) (uint64, error)
	Audit(ctx context.Context, a engine.AuditEntry) error
	AuditLog(ctx context.Context, page, perPage int) (*engine.AuditPage, error)

	Collections() []*schema.Collection
	Collection(nameOrID string) (*schema.Collection, error)
	CreateCollection(ctx context.Context, body []byte) (*schema.Collection, uint64, error)
	UpdateCollection(ctx context.Context, nameOrID string, body []byte) (*schema.Collection, uint64, error)
	DeleteCollection(ctx context.Context, nameOrID string) (uint64, error)

	ListRecords(ctx context.Context, p engine.Principal, coll string, q engine.ListQuery) (*engine.RecordList, error)
	GetRecord(ctx context.Context, p engine.Principal, coll, id, fields, expand string) (*engine.Record, error)
	CreateRecord(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error)
	UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, body []byte, ifMatch string) (*engine.Record, uint64, error)
	DeleteRecord(ctx context.Context, p engine.Principal, coll, id, ifMatch string) (uint64, error)
	Batch(ctx context.Context, p engine.Principal, ops []engine.BatchOp) (*engine.BatchResult, uint64, error)

	Indexes(ctx context.Context, coll string) ([]engine.Index, error)
	CreateIndex(ctx context.Context, coll, field string, unique bool) (*engine.Index, uint64, error)
	DeleteIndex(ctx context.Context, coll, index string) (uint64, error)

	Setting(key string) string
	Settings(reveal bool) map[string]string
	PatchSettings(ctx context.Context, body []byte) (map[string]string, uint64, error)
	Migrated() bool
}

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
	AddServer(id, addr string, voter bool) error
	RemoveServer(id string) error
	TransferLeadership(id string) error
	Snapshot() (index, term uint64, size int64, err error)
	Stats() cluster.Stats
	LastContact() time.Duration
	MemberStatus(ctx context.Context, timeout time.Duration) map[string]cluster.Status
	GossipStates() map[string]string
	Storage() cluster.StorageStatus
}

// StatsFunc returns the figures of the admin metrics snapshot.
type StatsFunc func() map[string]any
