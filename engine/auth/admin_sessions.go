package auth

import (
	"context"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Admin sessions are recorded when an admin signs in, so owners can list
// them and revoke one; the record is replicated like everything else.

// AdminSessionInfo is one active admin session.
type AdminSessionInfo struct {
	JTI       string `json:"jti"`
	AdminID   string `json:"admin_id"`
	Email     string `json:"email"`
	IssuedAt  int64  `json:"issued_at"`
	ExpiresAt int64  `json:"expires_at"`
	IP        string `json:"ip"`
	UserAgent string `json:"user_agent"`
}

// ClientInfo is what a session records of the client that opened it.
type ClientInfo struct {
	IP        string
	UserAgent string
}

type adminSessionCmd struct {
	JTI       string `json:"jti"`
	AdminID   string `json:"admin_id"`
	IssuedAt  int64  `json:"issued_at"`
	ExpiresAt int64  `json:"expires_at"`
	IP        string `json:"ip"`
	UserAgent string `json:"user_agent"`
}

// maxUserAgent bounds what a session keeps of the User-Agent header.
const maxUserAgent = 256

// openAdminSession signs a token for a and records the session.
func (ad *Admins) openAdminSession(ctx context.Context, a *Admin, authTime int64, client ClientInfo) (*AdminSession, uint64, error) {
	s, jti, err := ad.signAdmin(a, authTime)
	if err != nil {
		return nil, 0, err
	}
	ua := client.UserAgent
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	now := issueAfter(ad.au.core.Now(), a.tokensAfter) // as the token's iat
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminSession, adminSessionCmd{
		JTI: jti, AdminID: a.ID, IssuedAt: now.Unix(), ExpiresAt: now.Add(s.TTL).Unix(), IP: client.IP, UserAgent: ua,
	})
	if err != nil {
		return nil, idx, err
	}
	return s, idx, nil
}

func (ad *Admins) applyAdminSession(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminSessionCmd](cmd)
	if err != nil {
		return nil, err
	}
	_, err = tx.Exec(`INSERT OR REPLACE INTO _svc_admin_sessions (jti, admin_id, issued_at, expires_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?)`, c.JTI, c.AdminID, c.IssuedAt, c.ExpiresAt, c.IP, c.UserAgent)
	return nil, err
}

// AdminSessions lists the sessions that have not expired or been revoked.
func (ad *Admins) AdminSessions(ctx context.Context) ([]AdminSessionInfo, error) {
	out := []AdminSessionInfo{}
	now := ad.au.core.Now().Unix()
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT jti, admin_id, issued_at, expires_at, ip, user_agent FROM _svc_admin_sessions
			WHERE expires_at > ? ORDER BY issued_at DESC, jti`, now)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s AdminSessionInfo
			if err := rows.Scan(&s.JTI, &s.AdminID, &s.IssuedAt, &s.ExpiresAt, &s.IP, &s.UserAgent); err != nil {
				return err
			}
			a := ad.AdminByID(s.AdminID)
			if a == nil || ad.au.revoked.has(s.JTI) || s.IssuedAt <= a.tokensAfter {
				continue
			}
			s.Email = a.Email
			out = append(out, s)
		}
		return rows.Err()
	})
	return out, err
}

// RevokeAdminSession revokes one admin session by its token id.
func (ad *Admins) RevokeAdminSession(ctx context.Context, jti string) (uint64, error) {
	var exp int64
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT expires_at FROM _svc_admin_sessions WHERE jti = ?`, jti).Scan(&exp)
	})
	if err != nil {
		return 0, &engine.Error{Kind: engine.KindNotFound, Message: "Session not found"}
	}
	return ad.au.Revoke(ctx, RevokedToken{JTI: jti, Exp: exp})
}

// sessionTTL is an admin token's lifetime.
func (ad *Admins) adminTTL() time.Duration {
	return ad.windowSetting("auth.admin.window_seconds", 7*24*time.Hour)
}
