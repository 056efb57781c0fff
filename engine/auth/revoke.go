package auth

import (
	"context"
	"fmt"
	"sync"

	"svcd/engine"
	"svcd/fsm"
)

// revokedSet mirrors _svc_revoked: the token ids (jti) refused on every
// request until they expire. Each replica fills it from the revocations it
// applies, so a token revoked through any node is refused by each node as
// soon as that node has applied the revocation.
type revokedSet struct {
	mu  sync.RWMutex
	ids map[string]struct{}
}

func (s *revokedSet) has(jti string) bool {
	s.mu.RLock()
	_, ok := s.ids[jti]
	s.mu.RUnlock()
	return ok
}

func (s *revokedSet) add(jti string) {
	s.mu.Lock()
	if s.ids == nil {
		s.ids = map[string]struct{}{}
	}
	s.ids[jti] = struct{}{}
	s.mu.Unlock()
}

func (s *revokedSet) replace(ids map[string]struct{}) {
	s.mu.Lock()
	s.ids = ids
	s.mu.Unlock()
}

// RevokedToken names one token to revoke.
type RevokedToken struct {
	JTI string `json:"jti"`
	// Exp is the token's expiry (unix seconds): the row can go after it.
	Exp int64 `json:"exp"`
}

type revokeCmd struct {
	Tokens []RevokedToken `json:"tokens"`
}

// Revoke refuses the given tokens from now on, on every node. It returns
// the log index of the revocation.
func (au *Auth) Revoke(ctx context.Context, toks ...RevokedToken) (uint64, error) {
	if len(toks) == 0 {
		return 0, nil
	}
	_, idx, err := au.core.Propose(ctx, cmdRevoke, revokeCmd{Tokens: toks})
	return idx, err
}

func (au *Auth) applyRevoke(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[revokeCmd](cmd)
	if err != nil {
		return nil, err
	}
	for _, t := range c.Tokens {
		if t.JTI == "" {
			continue
		}
		if _, err := tx.Exec(`INSERT INTO _svc_revoked (jti, exp) VALUES (?, ?)
			ON CONFLICT (jti) DO UPDATE SET exp = max(exp, excluded.exp)`, t.JTI, t.Exp); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`DELETE FROM _svc_admin_sessions WHERE jti = ?`, t.JTI); err != nil {
			return nil, err
		}
		tx.Emit(fsm.Event{Kind: evRevoked, Subject: t.JTI})
	}
	return nil, nil
}

func (au *Auth) reloadRevoked(ctx context.Context) error {
	ids := map[string]struct{}{}
	err := au.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT jti FROM _svc_revoked`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var jti string
			if err := rows.Scan(&jti); err != nil {
				return err
			}
			ids[jti] = struct{}{}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("engine: load revoked tokens: %w", err)
	}
	au.revoked.replace(ids)
	return nil
}
