package api

import (
	"context"
	"net/http"
	"sync"

	"svcd/engine"
)

// bodyBudget bounds the memory the bodies of anonymous callers hold on
// this node at once (setting http.anonymous_body_budget_bytes): the buffer
// capacity a body's read allocates is charged before it is allocated
// (readAllCharged) and given back when its request ends. Past the budget a read stops with a
// 503 and Retry-After, so slow or stalled anonymous uploads cannot pile up
// hundreds of megabytes; authenticated callers are not charged (they are
// known, and rate limited by token).
type bodyBudget struct {
	mu   sync.Mutex
	used int64
}

var errBodyBudget = &engine.Error{Kind: engine.KindUnavailable, RetryAfter: 1,
	Message: "The server is receiving too many request bodies from anonymous callers; retry shortly"}

// take charges n bytes against limit (0: unlimited).
func (b *bodyBudget) take(n, limit int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if limit > 0 && b.used+n > limit {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes.
func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse is the number of bytes charged now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodyState is what one request's body has charged to the budget; bodyRate
// installs it and gives the charge back when the request ends.
type bodyState struct {
	charged int64
}

type bodyStateKey struct{}

func bodyStateOf(r *http.Request) *bodyState {
	st, _ := r.Context().Value(bodyStateKey{}).(*bodyState)
	return st
}

func withBodyState(r *http.Request, st *bodyState) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), bodyStateKey{}, st))
}

// charge takes n bytes from budget for this request, or fails with 503;
// a negative n gives bytes back.
func (st *bodyState) charge(budget *bodyBudget, limit, n int64) error {
	if n <= 0 {
		budget.give(-n)
		st.charged += n
		return nil
	}
	if !budget.take(n, limit) {
		return errBodyBudget
	}
	st.charged += n
	return nil
}
