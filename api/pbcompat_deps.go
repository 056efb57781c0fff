package api

import (
	"context"
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
		Bind: func(r *http.Request, p engine.Principal) *http.Request {
			noteCaller(r, p)
			return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		},
		ClientIP: s.clientIP,
		RecordScope: func(p engine.Principal, coll string, write bool) bool {
			return p.HasScope(coll, write)
		},
		RecordRole:   requiredRole(http.MethodPost, recordsScope),
		Collections:  s.colls,
		UserAuth:     s.users,
		AuthFlows:    s.flows,
		AdminAuth:    s.adminAuth,
		OAuth2:       s.oauth2,
		Realtime:     s.rt,
		RealtimeNode: pbRealtime{s},
		Files:        pbFiles{s}, // pbcompat_files.go (part E)
		Batch:        pbBatch{s},
		Off: func(w http.ResponseWriter, r *http.Request) {
			s.writeError(w, r, errRouteNotFound)
		},
	}
}

// pbServes reports whether PocketBase's layer answers r's path: its
// unknown paths and methods get PocketBase's error envelope while the
// layer is on.
func (s *Server) pbServes(r *http.Request) bool {
	if !pbcompat.OwnsPath(r.URL.Path) {
		return false
	}
	d := pbcompat.Deps{}
	if s.settings != nil {
		d.Settings = s.settings
	}
	return d.Enabled()
}
