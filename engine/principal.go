package engine

import "svcd/engine/token"

// Role is an admin role; each includes the ones below it.
type Role int

const (
	RoleNone Role = iota
	RoleViewer
	RoleEditor
	RoleDeveloper
	RoleOwner
)

var roleNames = [...]string{"", "viewer", "editor", "developer", "owner"}

func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return ""
	}
	return roleNames[r]
}

// ParseRole maps a role name to its Role, or RoleNone.
func ParseRole(s string) Role {
	for i, n := range roleNames {
		if i > 0 && n == s {
			return Role(i)
		}
	}
	return RoleNone
}

// PrincipalKind tells who is calling.
type PrincipalKind uint8

const (
	Anonymous PrincipalKind = iota
	User
	AdminPrincipal
)

// Principal is the authenticated caller of one request.
type Principal struct {
	Kind       PrincipalKind
	ID         string
	Email      string
	Collection string
	Role       Role
	// TokenID is the jti of the credential used.
	TokenID string
	// Claims are the verified claims of the token used (nil when the
	// caller sent none, or an API token).
	Claims *token.Claims
	// Scopes are an API token's scopes; nil for sessions.
	Scopes []string
	// AuthRecord holds the fields of an authenticated user's record, for
	// @request.auth.* in rules.
	AuthRecord map[string]any
	// Request is what rules may read of the HTTP request.
	Request RequestInfo
	// System marks the service itself acting (code run by the scheduler,
	// or code that asked for more than its caller's rights): an admin
	// with no account behind it.
	System bool
	// Via names the code acting for the principal (a hook's, route's or
	// job's id): its writes carry it to history (Actor.Via).
	Via string
}

// SystemPrincipal is the service itself, acting through the code via
// names: an owner-level admin that bypasses rules, with no account.
func SystemPrincipal(via string) Principal {
	return Principal{Kind: AdminPrincipal, Role: RoleOwner, System: true, Via: via}
}

// IsAdmin reports whether the caller is an admin (admins bypass rules).
func (p Principal) IsAdmin() bool { return p.Kind == AdminPrincipal }
