package api

import (
	"context"
	"time"
)

// everyoneWait bounds awaitEveryone.
const everyoneWait = 2 * time.Second

// awaitEveryone waits, at most everyoneWait, until every member that
// answers has applied idx. Revocations (logout, refresh, password reset,
// role changes) call it before answering, so the next request the client
// makes, to any node, already meets the revocation. A member that does
// not answer in time (down, cut off, far behind) may still accept the
// revoked token until it has caught up: a documented limit.
func (s *Server) awaitEveryone(ctx context.Context, idx uint64) {
	if idx == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, everyoneWait)
	defer cancel()
	for {
		behind := false
		for _, st := range s.node.MemberStatus(ctx, 500*time.Millisecond) {
			if st.AppliedIndex < idx {
				behind = true
				break
			}
		}
		if !behind {
			return
		}
		select {
		case <-ctx.Done():
			s.log.Warn("a member had not applied a revocation in time", "index", idx)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
