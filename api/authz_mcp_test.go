package api_test

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// pathMCP (the agent protocol) in the authorization matrix: no caller of
// the matrix may speak it (none holds an mcp scope); tokens with mcp:read
// read through svc.get_<coll>, svc.list_<coll> and svc://record/... as
// their admin: the owner's token as a read token, and the tokens of admins
// demoted to viewer, editor and developer as those roles. Each answer is
// held to the model: status, the rows a list holds, no marker it may not
// see.
func pathMCP(t *testing.T, x *matrix) {
	for _, c := range x.callers {
		st, body, _ := x.get(t, c, "POST", "/api/v1/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, nil)
		if st != http.StatusUnauthorized && st != http.StatusForbidden {
			t.Errorf("%s: the agent protocol without an mcp scope answered %d", c.name, st)
		}
		x.leaks(t, c, "tools/list", body)
	}
	agents := []struct {
		model mcaller
		token string
	}{{mcaller{name: "mcp:read token of the owner", kind: kindToken, scopes: []string{"read"}}, mintToken(t, x.s, "mcp:read")}}
	for _, role := range []string{"viewer", "editor", "developer"} {
		id, session := newAdmin(t, x.s, "mcp-"+role+"@example.com", "owner")
		tok := mcpTokenOf(t, x.s, session, "mcp:read")
		x.s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"role": role})
		agents = append(agents, struct {
			model mcaller
			token string
		}{mcaller{name: "mcp:read token of a " + role, kind: kindAdmin, role: role}, tok})
	}
	for _, a := range agents {
		c, h := a.model, bearer(a.token)
		for _, coll := range matrixCollections() {
			for _, rec := range matrixRecords[coll] {
				got, code := callTool(t, x.s, h, "svc.get_"+coll, map[string]any{"id": x.id(coll, rec)})
				if code != 0 {
					t.Errorf("%s: get_%s: protocol error %d", c.name, coll, code)
					continue
				}
				if st, want := toolStatus(got), c.wantStatus(coll, rec); st != want {
					t.Errorf("%s: svc.get_%s %s: %d, want %d", c.name, coll, rec, st, want)
				}
				x.leaks(t, c, "svc.get_"+coll, []byte(got.text()))
				res, ans := mcpRPC(t, x.s, h, "resources/read", map[string]any{"uri": "svc://record/" + coll + "/" + x.id(coll, rec)})
				if res.StatusCode != http.StatusOK {
					t.Errorf("%s: read svc://record/%s: HTTP %d", c.name, coll, res.StatusCode)
				}
				x.leaks(t, c, "svc://record/"+coll, ans.Result)
			}
			got, _ := callTool(t, x.s, h, "svc.list_"+coll, map[string]any{"perPage": 100})
			x.leaks(t, c, "svc.list_"+coll, []byte(got.text()))
			if st, want := toolStatus(got), c.wantListStatus(coll); st != want {
				t.Errorf("%s: svc.list_%s: %d, want %d", c.name, coll, st, want)
				continue
			}
			if got.IsError {
				continue
			}
			var want []string
			for _, rec := range matrixRecords[coll] {
				if c.mayView(coll, rec) {
					want = append(want, coll+"/"+rec)
				}
			}
			keys := x.listKeys(t, []byte(got.text()))
			sort.Strings(keys)
			if !slices.Equal(keys, want) {
				t.Errorf("%s: svc.list_%s = %v, the rules admit %v", c.name, coll, keys, want)
			}
		}
	}
}

var toolHTTPStatus = regexp.MustCompile(`HTTP (\d{3})`)

// toolStatus is the REST status behind a tool result: 200, or the one its
// error names.
func toolStatus(c toolCall) int {
	if !c.IsError {
		return http.StatusOK
	}
	if m := toolHTTPStatus.FindStringSubmatch(c.text()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
