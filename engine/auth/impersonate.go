package auth

import (
	"context"

	"svcd/engine"
)

// Impersonation (SPEC.md, Authentication 15): an admin signs in as a user
// with a one-hour user token that carries impersonated_by (the admin's
// id). The token is an ordinary user token otherwise: the user's rules
// apply to it, and logout or refresh treat it as the user's (a refreshed
// token keeps the claim and the one-hour lifetime). The HTTP route is an
// admin route, so the audit log records who impersonated whom.

// Impersonate signs admin in as user id of collection name.
func (au *Auth) Impersonate(ctx context.Context, admin engine.Principal, name, id string) (*UserSession, error) {
	if !admin.IsAdmin() {
		return nil, engine.ErrAdminOnly
	}
	if !au.core.SettingBool("auth.impersonation.enabled") {
		return nil, errFeatureOff("Impersonation")
	}
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, err
	}
	row, err := au.userByID(ctx, ci, id)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, errUserNotFound
	}
	s, err := au.issueUserSession(ci, row, 0, admin.ID)
	if err != nil {
		return nil, err
	}
	s.ImpersonatedBy = admin.ID
	return s, nil
}
