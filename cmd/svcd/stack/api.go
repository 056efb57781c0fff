package stack

import (
	"log/slog"

	"svcd/api"
	"svcd/engine/mcp"
)

// APIOptions are the HTTP layer's options for this node: the core, every
// module's service and the node's own hooks (stats, digest, secrets, key
// fingerprints, realtime). The caller adds its configuration (setup key,
// rate limits, trusted proxies, body rates) before api.New.
func (s *Stack) APIOptions(log *slog.Logger) api.Options {
	return api.Options{
		Settings:         s.Engine,
		Migrations:       s.Engine,
		Collections:      s.Engine.Schema(),
		Records:          s.writes(),
		Batch:            s.writes(),
		Indexes:          s.Engine.Schema(),
		CSV:              s.CSV,
		History:          s.History,
		Files:            s.Files,
		Flags:            s.Flags,
		FlagSegments:     s.Flags,
		Queues:           s.Queue,
		Workers:          s.Queue,
		Jobs:             s.Queue,
		Webhooks:         s.Webhooks,
		Workflows:        s.Workflows,
		Scripts:          s.Scripts,
		Notifications:    s.Notify,
		Backups:          s.Backups,
		Retention:        s.Retention,
		SchemaMigrations: s.Migrations,
		RowImports:       s.Imports,
		SQL:              s.SQL,
		Authenticator:    s.Auth,
		UserAuth:         s.Auth,
		AuthFlows:        s.Auth,
		Factors:          s.Auth.Factors(),
		Passkeys:         s.Auth.Passkeys(),
		AdminAuth:        s.Auth.Admins(),
		Admins:           s.Auth.Admins(),
		Auditor:          s.Auth.Admins(),
		OAuth2:           s.Auth.OAuth2(),
		Node:             s.Node,
		Stats:            s.Stats,
		Metrics:          s.Metrics,
		Digest:           s.Digest,
		Secrets:          s.Secrets,
		Fingerprints:     s.Fingerprints,
		Realtime:         s.Realtime,
		// The agent protocol: run_sql through the SQL console, custom
		// webhook events through the webhooks module, read_logs and
		// svc://logs/{date} from the node's log folder.
		MCP:    mcp.Options{SQL: mcpSQL{s.SQL}, Events: s.Webhooks, Logs: mcpLogs{s.Logs}, Info: mcp.Info{NodeID: s.Node.NodeID()}},
		Logs:   s.Logs,
		Logger: log,
	}
}

// writes is the record service the HTTP layer writes through: a refusal
// by a follower that was behind is checked again once it has caught up
// (write_catchup.go).
func (s *Stack) writes() caughtUpWrites {
	return caughtUpWrites{Records: s.Engine.Records(), node: s.Node}
}
