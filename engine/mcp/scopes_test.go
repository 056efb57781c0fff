package mcp

import (
	"slices"
	"strings"
	"testing"

	"svcd/engine"
)

func token(scopes ...string) Caller {
	return Caller{Principal: engine.Principal{Kind: engine.AdminPrincipal, Role: engine.RoleOwner, Scopes: scopes}}
}

// SPEC.md: mcp:admin implies every mcp scope, mcp:write does not imply
// mcp:read; read-only keeps reading and SQL, never writing.
func TestCallerScopes(t *testing.T) {
	cases := []struct {
		c    Caller
		want []string
	}{
		{token("mcp:read"), []string{"mcp:read"}},
		{token("mcp:write"), []string{"mcp:write"}},
		{token("mcp:sql"), []string{"mcp:sql"}},
		{token("mcp:admin"), []string{"mcp:read", "mcp:write", "mcp:admin", "mcp:sql"}},
		{token("read", "write", "admin"), nil},
		{Caller{Principal: token("mcp:admin").Principal, ReadOnly: true}, []string{"mcp:read", "mcp:sql"}},
		{Caller{Principal: token("mcp:write", "mcp:read").Principal, ReadOnly: true}, []string{"mcp:read"}},
	}
	for _, c := range cases {
		if got := c.c.scopes(); !slices.Equal(got, c.want) {
			t.Errorf("%v read-only=%v: %v, want %v", c.c.Principal.Scopes, c.c.ReadOnly, got, c.want)
		}
	}
	// The engine scopes a record tool acts with: never more than the mcp
	// scopes say, never nil (nil would be a session: no scope check).
	if got := token("mcp:read").recordPrincipal().Scopes; !slices.Equal(got, []string{"read"}) {
		t.Errorf("mcp:read acts with %v", got)
	}
	if got := token("mcp:sql").recordPrincipal().Scopes; got == nil || len(got) != 0 {
		t.Errorf("mcp:sql acts with %#v, want an empty non-nil list", got)
	}
	if got := (Caller{Principal: token("mcp:admin").Principal, ReadOnly: true}).recordPrincipal().Scopes; !slices.Equal(got, []string{"read"}) {
		t.Errorf("read-only mcp:admin acts with %v", got)
	}
	for _, p := range []engine.Principal{{}, {Kind: engine.AdminPrincipal}, {Kind: engine.AdminPrincipal, Scopes: []string{"admin"}}, {Kind: engine.User, Scopes: []string{"mcp:read"}}} {
		if IsAgent(p) {
			t.Errorf("IsAgent(%+v) = true", p)
		}
	}
}

// Parse refuses batches and malformed messages with the answer to send.
func TestParse(t *testing.T) {
	for body, code := range map[string]string{
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`: "-32600",
		`{"jsonrpc":`: "-32700",
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`: "-32600",
		`{"jsonrpc":"2.0","id":1}`:                 "-32600",
	} {
		if _, refusal := Parse([]byte(body)); refusal == nil || !contains(string(refusal), `"code":`+code) {
			t.Errorf("Parse(%s) = %s, want code %s", body, refusal, code)
		}
	}
	m, refusal := Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if refusal != nil || m.IsRequest() || m.Method() != "notifications/initialized" {
		t.Errorf("a notification: %+v %s", m, refusal)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
