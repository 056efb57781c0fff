package api

import (
	"net/http"

	"svcd/api/pbcompat"
	"svcd/engine"
)

// pbDeps hands the PocketBase layer the server's dependencies: the same
// engine interfaces as /api/v1, and api's body reader, client address and
// record role, so limits and policies stay one.
func (s *Server) pbDeps() pbcompat.Deps {
	return pbcompat.Deps{
		Records:  s.records,
		Catalog:  s.colls,
		Authn:    s.authn,
		Settings: s.settings,
		Log:      s.log,
		NodeID:   s.node.NodeID(),
		ReadBody: s.readBody,
		ClientIP: s.clientIP,
		RecordScope: func(p engine.Principal, coll string, write bool) bool {
			return p.HasScope(coll, write)
		},
		RecordRole:  requiredRole(http.MethodPost, recordsScope),
		Collections: s.colls,
		UserAuth:    s.users,
		AuthFlows:   s.flows,
		AdminAuth:   s.adminAuth,
		OAuth2:      s.oauth2,
		Realtime:    s.rt,
		Files:       s.files,
		Batch:       s.batcher,
	}
}
