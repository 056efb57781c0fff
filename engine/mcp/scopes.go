package mcp

import (
	"slices"

	"svcd/engine"
)

// Scope is one of the agent protocol's API-token scopes.
type Scope string

// The `mcp:*` scopes (SPEC.md): admin implies the others; write does not
// imply read.
const (
	ScopeRead  Scope = "mcp:read"
	ScopeWrite Scope = "mcp:write"
	ScopeAdmin Scope = "mcp:admin"
	ScopeSQL   Scope = "mcp:sql"
)

// Caller is who sends a message: an API token's principal (its admin, with
// the token's scopes), and whether the transport asked for read-only
// (the stdio bridge's --read-only).
type Caller struct {
	Principal engine.Principal
	ReadOnly  bool
}

// IsAgent reports whether p may speak the agent protocol at all: an API
// token with at least one `mcp:*` scope. Sessions and other tokens may not.
func IsAgent(p engine.Principal) bool {
	if !p.IsAdmin() || p.Scopes == nil {
		return false
	}
	for _, s := range p.Scopes {
		switch Scope(s) {
		case ScopeRead, ScopeWrite, ScopeAdmin, ScopeSQL:
			return true
		}
	}
	return false
}

// Has reports whether the caller holds scope s (mcp:admin implies all);
// read-only callers hold neither write nor admin.
func (c Caller) Has(s Scope) bool {
	if c.ReadOnly && (s == ScopeWrite || s == ScopeAdmin) {
		return false
	}
	for _, got := range c.Principal.Scopes {
		g := Scope(got)
		if g == s {
			return true
		}
		if g == ScopeAdmin && !c.ReadOnly {
			return true
		}
		// Read-only keeps an admin token's reading and its SQL (read-only
		// SQL: allow_write is refused, tools_sql.go).
		if g == ScopeAdmin && (s == ScopeRead || s == ScopeSQL) {
			return true
		}
	}
	return false
}

// recordPrincipal is the principal a record tool acts as: the token's
// admin, with the engine scopes its mcp scopes translate to (mcp:read
// reads every collection, mcp:write writes them), so the role table, the
// rules an admin without app-data rights falls back to, and every check
// of the REST API apply unchanged.
func (c Caller) recordPrincipal() engine.Principal {
	p := c.Principal
	var scopes []string
	if c.Has(ScopeRead) {
		scopes = append(scopes, "read")
	}
	if c.Has(ScopeWrite) {
		scopes = append(scopes, "write")
	}
	if scopes == nil {
		scopes = []string{} // non-nil: an API token with no record scope
	}
	p.Scopes = scopes
	return p
}

// controlPrincipal is the principal an admin tool acts as on the control
// plane: the token's admin with the `admin` token scope, so the admin's
// role decides (a viewer's token cannot create a collection whatever its
// scopes). Only tools the caller's mcp scopes show ever use it.
func (c Caller) controlPrincipal() engine.Principal {
	p := c.Principal
	p.Scopes = []string{"admin"}
	return p
}

// scopesOf lists the mcp scopes the caller holds, for server/info.
func (c Caller) scopes() []string {
	var out []string
	for _, s := range []Scope{ScopeRead, ScopeWrite, ScopeAdmin, ScopeSQL} {
		if c.Has(s) {
			out = append(out, string(s))
		}
	}
	return slices.Clip(out)
}
