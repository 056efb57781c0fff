package engine

import "strings"

// ErrInsufficientScope is SPEC.md's 403 for an API token without the scope
// a route needs.
var ErrInsufficientScope = &Error{Kind: KindForbidden, Message: "Insufficient token scope"}

// HasScope reports whether p may act: callers without scopes (sessions)
// always may; API tokens need `admin`, or for collection data `read` /
// `write` or `collection:<name>:<read|write|*>` (`*` matching any name or
// either access).
func (p Principal) HasScope(collection string, write bool) bool {
	if p.Scopes == nil {
		return true
	}
	access := "read"
	if write {
		access = "write"
	}
	for _, s := range p.Scopes {
		if s == "admin" || s == access {
			return true
		}
		parts := strings.Split(s, ":")
		if len(parts) == 3 && parts[0] == "collection" && collection != "" &&
			(parts[1] == "*" || strings.EqualFold(parts[1], collection)) &&
			(parts[2] == "*" || parts[2] == access) {
			return true
		}
	}
	return false
}

// HasAdminScope reports whether p may use the control plane: sessions
// always (their role decides), API tokens only with the `admin` scope.
func (p Principal) HasAdminScope() bool {
	if p.Scopes == nil {
		return true
	}
	for _, s := range p.Scopes {
		if s == "admin" {
			return true
		}
	}
	return false
}
