package stack_test

import (
	"fmt"
	"math/rand/v2"

	"svcd/engine"
	"svcd/engine/auth"
)

// opAccess drives the accounts-and-access commands into the replayed log:
// admin role changes and deletions (the last-owner rule decides some at
// apply time), password changes, force-logout, revocations, API tokens,
// sign-ins (session records and lockout counters) and audit entries.
func (w *detWorkload) opAccess(r *rand.Rand) {
	admins := w.auth.Admins().Admins()
	pick := func() *auth.Admin {
		if len(admins) == 0 {
			return nil
		}
		return admins[r.IntN(len(admins))]
	}
	client := auth.ClientInfo{IP: fmt.Sprintf("10.0.0.%d", r.IntN(3)), UserAgent: "det"}
	switch r.IntN(8) {
	case 0:
		a := pick()
		if a == nil {
			return
		}
		role := []string{"viewer", "editor", "developer", "owner"}[r.IntN(4)]
		_, idx, err := w.auth.Admins().UpdateAdmin(w.ctx, w.admin, a.ID, auth.AdminPatch{Role: &role})
		w.note("admin.role", idx, err)
	case 1:
		a := pick()
		if a == nil {
			return
		}
		idx, err := w.auth.Admins().DeleteAdmin(w.ctx, a.ID)
		w.note("admin.delete", idx, err)
	case 2:
		a := pick()
		if a == nil {
			return
		}
		pw := "another-horse-battery"
		_, idx, err := w.auth.Admins().UpdateAdmin(w.ctx, w.admin, a.ID, auth.AdminPatch{Password: &pw})
		w.note("admin.password", idx, err)
	case 3:
		idx, err := w.auth.Admins().LogoutAllAdmins(w.ctx)
		w.note("admins.logout", idx, err)
	case 4:
		idx, err := w.auth.Revoke(w.ctx, auth.RevokedToken{JTI: fmt.Sprintf("jti%d", r.IntN(50)), Exp: int64(r.IntN(1000))})
		w.note("revoke", idx, err)
	case 5:
		// Sign-ins record sessions; wrong passwords count toward the lockout.
		pw := "correct-horse-battery"
		if r.IntN(2) == 0 {
			pw = "wrong-horse-battery"
		}
		_, err := w.auth.Admins().LoginAdmin(w.ctx, fmt.Sprintf("owner%d@example.com", r.IntN(8)), pw, client)
		w.note("admin.login", 0, err)
	case 6:
		a := pick()
		if a == nil {
			return
		}
		caller := engine.Principal{Kind: engine.AdminPrincipal, ID: a.ID, Role: engine.ParseRole(a.Role)}
		_, idx, err := w.auth.Admins().MintAPIToken(w.ctx, caller, "t", []string{"read", "collection:posts:*"}, int64(r.IntN(3600)))
		w.note("api_token.create", idx, err)
		if toks := w.auth.Admins().APITokens(); len(toks) > 0 && r.IntN(2) == 0 {
			idx, err := w.auth.Admins().DeleteAPIToken(w.ctx, toks[r.IntN(len(toks))].ID)
			w.note("api_token.delete", idx, err)
		}
	default:
		err := w.auth.Admins().Audit(w.ctx, auth.AuditEntry{ActorID: "adm", Method: "POST", Path: "/api/v1/admin/x", Action: "x.create", Status: 201 + r.IntN(3)})
		w.note("audit", 0, err)
	}
}
