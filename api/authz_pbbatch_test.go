package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// pbBatchOp is one write of pathPBBatch: the entry through PocketBase's
// batch and the native batch entry that must succeed exactly when it does.
type pbBatchOp struct {
	what         string
	pb, native   map[string]any
	wantReadable string // an upsert onto an existing record: "coll/id" the caller must view for the update (else the create fails on the id)
}

// pathPBBatch: writes through PocketBase's /api/batch (create, update,
// delete, upsert), each alone in a batch as every caller, succeed exactly
// when the same write through svcd's /api/v1/batch does, and what the
// answers hold obeys the view rules and hidden fields.
func pathPBBatch(t *testing.T, x *matrix, c mcaller) {
	pbColl := func(coll string) string { return "/api/collections/" + coll + "/records" }
	var ops []pbBatchOp
	ops = append(ops,
		pbBatchOp{what: "create scratch", pb: entry("POST", pbColl("scratch"), map[string]any{"n": 1}), native: entry("POST", "/api/v1/scratch", map[string]any{"n": 1})},
		pbBatchOp{what: "create vault", pb: entry("POST", pbColl("vault"), map[string]any{"bump": 1}), native: entry("POST", "/api/v1/vault", map[string]any{"bump": 1})},
		pbBatchOp{what: "create owned", pb: entry("POST", pbColl("owned")+"?expand=owner", map[string]any{"bump": 1, "owner": x.id("members", "ua")}),
			native: entry("POST", "/api/v1/owned?expand=owner", map[string]any{"bump": 1, "owner": x.id("members", "ua")})},
	)
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			id := x.id(coll, rec)
			ops = append(ops, pbBatchOp{what: "update " + coll + "/" + rec,
				pb:     entry("PATCH", pbColl(coll)+"/"+id+"?expand=link,adm,owner,pub,owned", map[string]any{"bump": 5}),
				native: entry("PATCH", "/api/v1/"+coll+"/"+id+"?expand=link,adm,owner,pub,owned", map[string]any{"bump": 5})})
		}
	}
	// Deletes and upserts of scratch records the owner creates for each.
	scratch := func() string { return x.s.CreateRecord(t, "scratch", map[string]any{"n": 2})["id"].(string) }
	ops = append(ops,
		pbBatchOp{what: "delete scratch", pb: entry("DELETE", pbColl("scratch")+"/"+scratch(), nil), native: entry("DELETE", "/api/v1/scratch/"+scratch(), nil)})
	up := scratch()
	ops = append(ops,
		pbBatchOp{what: "upsert an existing scratch", pb: entry("PUT", pbColl("scratch"), map[string]any{"id": up, "n": 3}),
			native: entry("PATCH", "/api/v1/scratch/"+up, map[string]any{"n": 3}), wantReadable: "scratch/" + up},
		pbBatchOp{what: "upsert a new scratch", pb: entry("PUT", pbColl("scratch"), map[string]any{"n": 4}),
			native: entry("POST", "/api/v1/scratch", map[string]any{"n": 4})},
		pbBatchOp{what: "upsert pub/pa", pb: entry("PUT", pbColl("pub"), map[string]any{"id": x.id("pub", "pa"), "bump": 6}),
			native: entry("PATCH", "/api/v1/pub/"+x.id("pub", "pa"), map[string]any{"bump": 6}), wantReadable: "pub/" + x.id("pub", "pa")},
		pbBatchOp{what: "upsert owned/oa", pb: entry("PUT", pbColl("owned"), map[string]any{"id": x.id("owned", "oa"), "bump": 6}),
			native: entry("PATCH", "/api/v1/owned/"+x.id("owned", "oa"), map[string]any{"bump": 6}), wantReadable: "owned/" + x.id("owned", "oa")},
	)
	for _, op := range ops {
		nst, nbody := x.batchAs(t, c, batchURL, op.native)
		want := nst == http.StatusOK
		if op.wantReadable != "" {
			st, _, _ := x.get(t, c, "GET", "/api/v1/"+op.wantReadable, nil, nil)
			want = want && st == http.StatusOK
		}
		x.leaks(t, c, "native batch "+op.what, nbody)
		pst, pbody := x.batchAs(t, c, "/api/batch", op.pb)
		x.leaks(t, c, "PocketBase batch "+op.what, pbody)
		got := pst == http.StatusOK
		if got {
			var answers []struct {
				Status int             `json:"status"`
				Body   json.RawMessage `json:"body"`
			}
			if err := json.Unmarshal(pbody, &answers); err != nil || len(answers) != 1 {
				t.Errorf("%s: PocketBase batch %s: %s (%v)", c.name, op.what, pbody, err)
				continue
			}
			if a := answers[0]; a.Status < 200 || a.Status > 299 {
				t.Errorf("%s: PocketBase batch %s: 200 with an entry of %d", c.name, op.what, a.Status)
			}
		}
		if got != want {
			t.Errorf("%s: PocketBase batch %s succeeded %v (%d %s), svcd's batch %v (%d %.200s)", c.name, op.what, got, pst, pbody, want, nst, nbody)
		}
	}
	x.dropExtra(t, "vault", "owned")
}

// batchAs posts a one-entry batch as c.
func (x *matrix) batchAs(t *testing.T, c mcaller, path string, e map[string]any) (int, []byte) {
	t.Helper()
	st, body, _ := x.get(t, c, http.MethodPost, path, map[string]any{"requests": []map[string]any{e}}, nil)
	return st, body
}

// dropExtra deletes, as the owner, the records of colls the fixture does
// not know (the batch rows' creates), so later paths see the fixture.
func (x *matrix) dropExtra(t *testing.T, colls ...string) {
	t.Helper()
	for _, coll := range colls {
		res, body := x.s.AdminDo(t, "GET", "/api/v1/"+coll+"?perPage=500", nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("list %s: %d %s", coll, res.StatusCode, body)
		}
		for _, key := range x.listKeysRaw(t, body) {
			if x.keys[key] == "" {
				if res, body := x.s.AdminDo(t, "DELETE", "/api/v1/"+coll+"/"+key, nil); res.StatusCode >= 300 {
					t.Fatalf("delete %s/%s: %d %s", coll, key, res.StatusCode, body)
				}
			}
		}
	}
}

// listKeysRaw reads the ids of a native list answer.
func (x *matrix) listKeysRaw(t *testing.T, body []byte) []string {
	t.Helper()
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("list answer %s: %v", body, err)
	}
	out := make([]string, 0, len(l.Data))
	for _, r := range l.Data {
		out = append(out, r.ID)
	}
	return out
}
