package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The PocketBase layer's record paths (api/pbcompat) in the authorization
// matrix: the same rules as /api/v1, so the same statuses and the same
// values, through PocketBase's shapes (a list's records are under items).
func pbMatrixPaths() []mpath {
	return []mpath{
		{name: "pb-get", run: pathPBGet},
		{name: "pb-file-download", run: pathPBFileDownload}, // authz_pbfiles_test.go
		{name: "pb-list", run: pathPBList},
		{name: "pb-filter", run: pathPBFilter},
		{name: "pb-expand", run: pathPBExpand([]string{"pub?expand=link,adm", "notes?expand=pub,owned", "owned?expand=owner",
			"notes?expand=pub.link.owner", "pub?expand=notes_via_pub", "members?expand=owned_via_owner"})},
		{name: "pb-realtime", all: pathPBRealtime}, // authz_pbrealtime_test.go
		{name: "pb-batch", run: pathPBBatch},       // authz_pbbatch_test.go
		{name: "pb-auth-with-password", all: pathPBSignIn},
		// Last: a refresh replaces the callers' tokens (authz_pbauth_test.go).
		{name: "pb-auth-refresh", all: pathPBRefresh},
	}
}

func pbRecords(coll string) string { return "/api/collections/" + coll + "/records" }

func pathPBGet(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			st, body, _ := x.get(t, c, "GET", pbRecords(coll)+"/"+x.id(coll, rec), nil, nil)
			if want := c.wantStatus(coll, rec); st != want {
				t.Errorf("%s: GET %s/%s: %d, want %d", c.name, coll, rec, st, want)
			}
			x.leaks(t, c, coll+"/"+rec, body)
		}
	}
}

func pathPBList(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		st, body, _ := x.get(t, c, "GET", pbRecords(coll)+"?perPage=100", nil, nil)
		if want := c.wantListStatus(coll); st != want {
			t.Errorf("%s: list %s: %d, want %d", c.name, coll, st, want)
			continue
		}
		x.leaks(t, c, coll, body)
		if st != 200 {
			continue
		}
		want := map[string]bool{}
		for _, rec := range matrixRecords[coll] {
			if c.mayView(coll, rec) {
				want[coll+"/"+rec] = true
			}
		}
		got := x.listKeys(t, body)
		if len(got) != len(want) {
			t.Errorf("%s: list %s: %v, want %v", c.name, coll, got, want)
		}
		for _, k := range got {
			if !want[k] {
				t.Errorf("%s: list %s holds %s", c.name, coll, k)
			}
		}
	}
}

// pathPBFilter: the probes of pathFilter through PocketBase's path (where
// a filter on a field the caller may not read is a 400, not dropped).
func pathPBFilter(t *testing.T, x *matrix, c mcaller) {
	for _, p := range filterProbes {
		st, yes, _ := x.get(t, c, "GET", pbRecords(p.coll)+"?perPage=100&filter="+url.QueryEscape(fmt.Sprintf(p.expr, p.target)), nil, nil)
		st2, no, _ := x.get(t, c, "GET", pbRecords(p.coll)+"?perPage=100&filter="+url.QueryEscape(fmt.Sprintf(p.expr, "mdecoy")), nil, nil)
		if st != st2 {
			t.Errorf("LEAK %s via pb-filter on %s (%s): %d for the value, %d for a decoy", c.name, p.coll, p.expr, st, st2)
			continue
		}
		if st == 200 && !slices.Equal(x.listKeys(t, yes), x.listKeys(t, no)) && !c.allowed(p.target) {
			t.Errorf("LEAK %s via pb-filter on %s (%s): %s", c.name, p.coll, p.expr, p.target.label())
		}
	}
}

func pathPBExpand(urls []string) func(t *testing.T, x *matrix, c mcaller) {
	return func(t *testing.T, x *matrix, c mcaller) {
		for _, u := range urls {
			coll, q, _ := strings.Cut(u, "?")
			st, body, _ := x.get(t, c, "GET", pbRecords(coll)+"?perPage=100&"+q, nil, nil)
			if st != 200 {
				continue
			}
			x.leaks(t, c, u, body)
		}
	}
}
