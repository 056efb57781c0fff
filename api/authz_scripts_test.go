package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// The JavaScript helpers in the authorization matrix: custom routes that
// answer what helpers.find and helpers.query return, called by each
// caller, must show it exactly what the record routes show it (the code
// acts with its caller's rights), expansions and filters included.

// ensureMatrixRoutes saves the routes the JavaScript paths call (once).
func ensureMatrixRoutes(t *testing.T, x *matrix) {
	t.Helper()
	out := x.s.MustAdmin(t, http.StatusOK, "GET", routesURL, nil)
	if len(apitest.List(t, out["data"])) > 0 {
		return
	}
	mkRoute(t, x.s, "GET", "mx/find/:coll/:id", `
		try { return {found: helpers.find(params.coll, params.id, {expand: query.expand || ""})} }
		catch (e) { return {status: e.status || 500, message: e.message} }`)
	mkRoute(t, x.s, "GET", "mx/query/:coll", `
		try { return helpers.query(params.coll, {perPage: 100, expand: query.expand || "", filter: query.filter || ""}) }
		catch (e) { return {status: e.status || 500, message: e.message} }`)
}

// jsAnswer calls a matrix route as c: the thrown status (0 when none)
// and the answer.
func jsAnswer(t *testing.T, x *matrix, c mcaller, path string) (int, []byte) {
	t.Helper()
	st, body, _ := x.get(t, c, "GET", "/api/v1/custom/"+path, nil, nil)
	if st != http.StatusOK {
		t.Fatalf("%s: %s: %d %s", c.name, path, st, body)
	}
	var v struct {
		Status int `json:"status"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Status, body
}

// pathJSFind: helpers.find of every record, plainly and with expansions.
func pathJSFind(t *testing.T, x *matrix, c mcaller) {
	ensureMatrixRoutes(t, x)
	expands := map[string]string{"pub": "link.owner,adm,notes_via_pub", "notes": "pub.link,owned.owner", "owned": "owner", "members": "owned_via_owner"}
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			for _, exp := range []string{"", expands[coll]} {
				path := "mx/find/" + coll + "/" + x.id(coll, rec) + "?expand=" + url.QueryEscape(exp)
				thrown, body := jsAnswer(t, x, c, path)
				x.leaks(t, c, "helpers.find "+coll+"/"+rec+" expand="+exp, body)
				var v struct {
					Found map[string]any `json:"found"`
				}
				_ = json.Unmarshal(body, &v)
				got := 200
				switch {
				case thrown != 0:
					got = thrown
				case v.Found == nil:
					got = 404
				}
				if want := c.wantStatus(coll, rec); got != want {
					t.Errorf("%s: helpers.find %s/%s: %d (%s), the record routes answer %d", c.name, coll, rec, got, body, want)
				}
			}
		}
	}
}

// pathJSQuery: helpers.query of every collection lists what the record
// list admits; filters on what the caller may not read reveal nothing.
func pathJSQuery(t *testing.T, x *matrix, c mcaller) {
	ensureMatrixRoutes(t, x)
	for _, coll := range matrixCollections() {
		thrown, body := jsAnswer(t, x, c, "mx/query/"+coll)
		x.leaks(t, c, "helpers.query "+coll, body)
		want := c.wantListStatus(coll)
		if thrown != 0 || want != 200 {
			if thrown != want {
				t.Errorf("%s: helpers.query %s: %s, the record routes answer %d", c.name, coll, body, want)
			}
			continue
		}
		var wantKeys []string
		for _, rec := range matrixRecords[coll] {
			if c.mayView(coll, rec) {
				wantKeys = append(wantKeys, coll+"/"+rec)
			}
		}
		got := x.listKeys(t, body)
		sort.Strings(got)
		if !slices.Equal(got, wantKeys) {
			t.Errorf("%s: helpers.query %s = %v, the rules admit %v", c.name, coll, got, wantKeys)
		}
	}
	for _, q := range []string{"pub?expand=link.owner,adm,notes_via_pub", "notes?expand=pub.link,owned.owner"} {
		coll, rest, _ := strings.Cut(q, "?")
		_, body := jsAnswer(t, x, c, "mx/query/"+coll+"?"+rest)
		x.leaks(t, c, "helpers.query "+q, body)
	}
	for _, p := range filterProbes {
		_, yes := jsAnswer(t, x, c, "mx/query/"+p.coll+"?filter="+url.QueryEscape(fmt.Sprintf(p.expr, p.target)))
		_, no := jsAnswer(t, x, c, "mx/query/"+p.coll+"?filter="+url.QueryEscape(fmt.Sprintf(p.expr, "mdecoy")))
		if !slices.Equal(jsKeys(x, yes), jsKeys(x, no)) && !c.allowed(p.target) {
			t.Errorf("LEAK %s via helpers.query filter on %s (%s): %s", c.name, p.coll, p.expr, p.target.label())
		}
	}
}

// jsKeys are the keys of a query answer's records (nil for a throw).
func jsKeys(x *matrix, body []byte) []string {
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &l)
	var out []string
	for _, r := range l.Data {
		out = append(out, x.keys[r.ID])
	}
	return out
}
