package engine

import "svcd/engine/filter"

// A request has one principal, and its rights over app data are read from
// it alone, by every path that reads or writes records: lists, gets, each
// level of an expansion, the collections a filter reaches (relations,
// back-relations, @collection), search, history, batches and realtime
// deliveries. Three answers exist per collection:
//
//   - bypass: an admin session, or an API token inside its scopes, acts as
//     an admin: rules do not apply and hidden fields are visible;
//   - rules: users, guests, anonymous callers (and admins whose role does
//     not reach app data, which the HTTP layer turns into anonymous
//     callers) are decided by the collection's rules;
//   - out of reach: an API token never reads a collection its scopes do not
//     name, whatever that collection's rules say. It is not expanded, a
//     filter cannot reach it, and a direct read is 403.

// bypasses reports whether p acts as an admin on collection: rules are not
// checked and hidden fields are visible.
func (p Principal) bypasses(collection string, write bool) bool {
	return p.IsAdmin() && p.HasScope(collection, write)
}

// reaches reports whether p may read collection at all (rules aside).
func (p Principal) reaches(collection string) bool { return p.HasScope(collection, false) }

// filterEnv is the context of an expression p wrote (a list filter, a
// realtime subscription filter): what p may read of hidden fields and of
// other collections. A rule's context is RuleEnv.filterEnv (admins write
// rules: they read everything).
func (p Principal) filterEnv(env *filter.Env) *filter.Env {
	switch {
	case p.IsAdmin() && p.Scopes == nil:
		env.AllowHidden = true
	case p.IsAdmin():
		// An API token: as an admin inside its scopes, nothing outside.
		env.AllowHidden = true
		env.Readable = func(c *filter.Collection) bool { return p.reaches(c.Name) }
	default:
		// Users, guests and anonymous callers reach only collections
		// everyone may list; hidden fields stay hidden.
		env.Readable = publicCollection
	}
	return env
}

func publicCollection(c *filter.Collection) bool { return c.Public }

// readerOf is the principal a command captured for reads inside the state
// machine: an admin (with an API token's scopes) or a caller the rules
// decide. Rule context travels separately, in the command's RuleEnv.
func readerOf(admin bool, scopes []string) Principal {
	if !admin {
		return Principal{}
	}
	return Principal{Kind: AdminPrincipal, Scopes: scopes}
}

// scopesOf is what a command carries of p's scopes (nil for sessions).
func scopesOf(p Principal) []string {
	if p.Scopes == nil {
		return nil
	}
	return append([]string{}, p.Scopes...)
}
