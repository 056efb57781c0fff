package api

import (
	"net/http"
	"strings"

	"svcd/api/pbcompat"
)

// pbConsistency (the setting pbcompat.ConsistencySetting, defined with
// the layer's others in pbcompat.SettingDefs) makes the requests on
// PocketBase's paths linearizable by default. A PocketBase app was written against one database: it creates
// a collection or a record and reads it back, or writes into it, possibly
// through another node behind a load balancer, and expects to find it.
// svcd's own default (local state, never older than this node's
// acknowledged writes) would answer 404 there for a moment: reads answer
// from the replica, and a write's checks (the collection exists, the
// record exists, the rule admits it) run on it before the write is
// proposed. So every request of the layer, writes included, first waits
// for the leader's commit index. A request that sends X-Svc-Consistency
// keeps its choice, and the setting "local" restores svcd's default for
// apps that prefer speed.
func (s *Server) pbConsistency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Svc-Consistency") == "" &&
			!strings.EqualFold(strings.TrimSpace(s.settings.Setting(pbcompat.ConsistencySetting)), "local") {
			r.Header.Set("X-Svc-Consistency", "strong")
		}
		next.ServeHTTP(w, r)
	})
}
