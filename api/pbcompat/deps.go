package pbcompat

import (
	"context"
	"log/slog"
	"net/http"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/realtime"
)

// Records is what the record routes need: the method set of api.Records.
type Records interface {
	ListRecords(ctx context.Context, p engine.Principal, coll string, q engine.ListQuery) (*engine.RecordList, error)
	GetRecord(ctx context.Context, p engine.Principal, coll, id, fields, expand string) (*engine.Record, error)
	CreateRecord(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error)
	UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, body []byte, ifMatch string) (*engine.Record, uint64, error)
	DeleteRecord(ctx context.Context, p engine.Principal, coll, id, ifMatch string) (uint64, error)
}

// Catalog finds collections (by name or id), for shaping records.
type Catalog interface {
	Collection(nameOrID string) (*schema.Collection, error)
}

// Authenticator resolves a token (session, API token) to its principal.
type Authenticator interface {
	Authenticate(ctx context.Context, raw string) (engine.Principal, error)
}

// Settings reads runtime settings (pocketbase.enabled and the others).
type Settings interface {
	Setting(key string) string
}

// Deps is what the layer needs from the rest of svcd; api.Server fills it
// from its own dependencies. The interface types of the parts' fields are
// declared in the parts' files (see the package doc).
type Deps struct {
	Records  Records
	Catalog  Catalog
	Authn    Authenticator
	Settings Settings
	Log      *slog.Logger
	// NodeID names this node (health, realtime client ids).
	NodeID string
	// ReadBody reads a request body within svcd's limits (size, rate);
	// it is api's reader, so limits stay one policy.
	ReadBody func(w http.ResponseWriter, r *http.Request) ([]byte, error)
	// Bind, when set, is told the caller of each request once the
	// layer resolved it, and returns the request carrying it the way the
	// rest of svcd reads it (api's request log, body budget, audit).
	Bind func(r *http.Request, p engine.Principal) *http.Request
	// ClientIP is the caller's address (api's, which knows the trusted
	// proxies); nil: the peer address.
	ClientIP func(r *http.Request) string
	// Off answers a request while the layer is turned off (svcd's 404:
	// the paths do not exist then); nil: PocketBase's 404.
	Off http.HandlerFunc
	// RecordScope reports whether p may reach coll's records (an API
	// token's scopes), write for a write.
	RecordScope func(p engine.Principal, coll string, write bool) bool
	// RecordRole is the least admin role that reaches records; an admin
	// below it is a guest on record paths (api's role table).
	RecordRole engine.Role

	// Part B (collections.go).
	Collections CollectionAdmin
	// Part C (auth.go).
	UserAuth  UserAuth
	AuthFlows AuthFlows
	AdminAuth AdminAuth
	OAuth2    OAuth2Flows
	// Part D (realtime.go).
	Realtime     *realtime.Hub
	RealtimeNode RealtimeNode
	// Part E (files.go, batch.go).
	Files Files
	Batch Batcher
}
