package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// FuzzListQuery sends arbitrary list parameters (SPEC.md "Records": filter,
// sort, expand, fields, cursor, search, nearVector with nearVectorField,
// nearLimit and nearMinScore, page, perPage, skipTotal) to a live node
// started once per run, as one of four callers (anonymous, a user, the
// admin, an API token scoped to collection:pub:read), three ways: a list,
// a GET of one record with the same fields and expand, and a read-only
// batch of one list entry. Every answer is a 200 or SPEC's envelope
// {error, code} with code == status among 400, 403, 404 and 422: never a
// 500 (the recoverer's answer to a panic) nor a dropped connection. A 200
// list is an object whose data is an array (with nextCursor in cursor
// mode). Callers never see what their rights hide: the marker values
// (all beginning "zq") of a hidden field, an admin-only collection, rows
// of a rule that admits nobody, another user's rows and account, unless
// the caller is the admin (or, for the hidden field of pub, the token).
//
// The inputs: near is "nearVector|nearVectorField|nearLimit|nearMinScore"
// (nearVector is sent when near is not empty); page and perPage are sent
// when not 0; a cursor beginning with "~" is sent as the base64url form of
// the rest (the JSON of a position), so that mutations reach the keyset
// conditions. The bits of caller: 0-1 the caller (listFuzzCallers), 2-4
// the collection (listFuzzColls), 5 skipTotal=1, 6 an empty cursor is sent
// too (cursor mode), 7 an empty nearVector is sent too.
func FuzzListQuery(f *testing.F) {
	x := seedListFuzz(f)
	for _, sd := range listFuzzSeeds() {
		f.Add(sd.filter, sd.sort, sd.expand, sd.fields, sd.cursor, sd.search, sd.near, sd.page, sd.perPage, sd.caller)
	}
	f.Fuzz(func(t *testing.T, filter, sort, expand, fields, cursor, search, near string, page, perPage int, caller uint8) {
		in := []string{filter, sort, expand, fields, cursor, search, near}
		size := 0
		for _, s := range in {
			size += len(s)
		}
		if size > 256<<10 {
			return // beyond any URL a client or proxy sends (and net/http's 1 MB header limit)
		}
		x.check(t, in, page, perPage, caller)
	})
}

// The callers of FuzzListQuery, by the low two bits of its caller input.
var listFuzzCallers = [4]string{"anonymous", "user", "admin", "token"}

// The collections of FuzzListQuery, by bits 2-4 of its caller input; the
// last is pub again (it was pub through the legacy record path, which
// PocketBase's layer replaced: api/pbcompat's tests cover that path).
var listFuzzColls = [8]string{"pub", "comments", "note", "vault", "owned", "users", "nope", "pub"}

// listFuzzMarkers are the values callers other than the admin may not see
// (the token excepted for pub's hidden field; see leaks).
var listFuzzMarkers = []string{"zqHIDDENzq", "zqNOTEzq", "zqVAULTzq", "zqOTHERzq", "zqUSERTWOzq"}

type listFuzz struct {
	s *apitest.Server
	// headers per caller (nil: anonymous).
	headers [4]map[string]string
	// ids holds a record of each collection for the single GET.
	ids map[string]string
}

// seedListFuzz starts the node of FuzzListQuery and seeds it:
//
//	users (auth; a user reads only their own record): u1 (the caller), u2 named zqUSERTWOzq
//	note (rule text = "shown" admits none of its rows): n1 zqNOTEzq
//	vault (admin-only): v1 zqVAULTzq
//	owned (rule owner = @request.auth.id): o1 of u1, o2 of u2 titled zqOTHERzq
//	pub (public; text searchable, number, bool, json, select, multiple
//	     select, date, hidden text zqHIDDENzq, vector of 3, relations to
//	     note, vault, owned and users): p1, p2, p3
//	comments (public; post -> pub, parent -> comments): c1, c2 (reply to c1), c3
func seedListFuzz(tf *testing.F) *listFuzz {
	s := apitest.Start(tf, apitest.Options{})
	x := &listFuzz{s: s, ids: map[string]string{"nope": "abc"}}
	s.CreateCollection(tf, usersCollection())
	s.CreateCollection(tf, coll("note", "base", []map[string]any{f("text", "text")}, "view_rule", `text = "shown"`))
	s.CreateCollection(tf, coll("vault", "base", []map[string]any{f("code", "text")}))
	s.CreateCollection(tf, coll("owned", "base", []map[string]any{
		f("title", "text"), f("owner", "relation", "collection", "users"),
	}, "view_rule", "owner = @request.auth.id"))
	s.CreateCollection(tf, coll("pub", "base", []map[string]any{
		f("title", "text", "searchable", true),
		f("n", "number"),
		f("flag", "bool"),
		f("meta", "json"),
		f("kind", "select", "values", []string{"a", "b", "c"}),
		f("tags", "select", "values", []string{"x", "y", "z"}, "multiple", true),
		f("when", "date"),
		f("secret", "text", "hidden", true),
		f("emb", "vector", "dimensions", 3),
		f("note", "relation", "collection", "note"),
		f("vault", "relation", "collection", "vault"),
		f("owned", "relation", "collection", "owned"),
		f("author", "relation", "collection", "users"),
	}, "view_rule", ""))
	s.CreateCollection(tf, coll("comments", "base", []map[string]any{
		f("text", "text"), f("post", "relation", "collection", "pub"), f("parent", "relation", "collection", "comments"),
	}, "view_rule", ""))

	register := func(email, name string) (id, tok string) {
		res, body := s.Do(tf, http.MethodPost, "/api/v1/auth/users/register", map[string]any{"email": email, "password": userPassword, "name": name}, nil)
		if res.StatusCode != http.StatusCreated {
			tf.Fatalf("register %s: %d %s", email, res.StatusCode, body)
		}
		return apitest.Obj(tf, apitest.DecodeMap(tf, body)["data"])["id"].(string), login(tf, s, email, userPassword)
	}
	u1, tok := register("u1@example.com", "N")
	u2, _ := register("u2@example.com", "zqUSERTWOzq")
	x.headers[1] = bearer(tok)
	x.headers[2] = s.AdminHeaders(tf, nil)
	minted := s.MustAdmin(tf, http.StatusCreated, http.MethodPost, "/api/v1/admin/api-tokens",
		map[string]any{"name": "fuzz", "scopes": []string{"collection:pub:read"}})
	x.headers[3] = bearer(apitest.Obj(tf, minted["data"])["token"].(string))

	mk := func(c string, rec map[string]any) string { return s.CreateRecord(tf, c, rec)["id"].(string) }
	n1 := mk("note", map[string]any{"text": "zqNOTEzq"})
	v1 := mk("vault", map[string]any{"code": "zqVAULTzq"})
	o1 := mk("owned", map[string]any{"title": "mine", "owner": u1})
	o2 := mk("owned", map[string]any{"title": "zqOTHERzq", "owner": u2})
	p1 := mk("pub", map[string]any{"title": "red apple", "n": 1, "flag": true, "meta": map[string]any{"a": map[string]any{"b": []int{1, 2}}, "s": "x"},
		"kind": "a", "tags": []string{"x", "y"}, "when": "2024-01-02T03:04:05Z", "secret": "zqHIDDENzq", "emb": []float64{1, 0, 0},
		"note": n1, "vault": v1, "owned": o2, "author": u2})
	p2 := mk("pub", map[string]any{"title": "green pear", "n": 2.5, "flag": false, "meta": []any{1, "two", nil},
		"kind": "b", "tags": []string{}, "when": 1700000000, "secret": "zqHIDDENzq", "emb": []float64{0, 1, 0}, "owned": o1, "author": u1})
	mk("pub", map[string]any{"title": "Ünïcödé plum", "n": -3})
	c1 := mk("comments", map[string]any{"text": "first", "post": p1})
	mk("comments", map[string]any{"text": "reply", "post": p1, "parent": c1})
	mk("comments", map[string]any{"text": "other", "post": p2})
	x.ids["pub"], x.ids["comments"], x.ids["note"], x.ids["vault"], x.ids["owned"], x.ids["users"] = p1, c1, n1, v1, o2, u2
	return x
}

// check sends one input as a list, a single GET and a batch.
func (x *listFuzz) check(t *testing.T, in []string, page, perPage int, caller uint8) {
	filter, sort, expand, fields, cursor, search, near := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	who := int(caller & 3)
	slot := int(caller>>2) & 7
	name := listFuzzColls[slot]
	base := "/api/v1/" + name

	q := url.Values{}
	set := func(k, v string, always bool) {
		if v != "" || always {
			q.Set(k, v)
		}
	}
	set("filter", filter, false)
	set("sort", sort, false)
	set("expand", expand, false)
	set("fields", fields, false)
	if raw, ok := strings.CutPrefix(cursor, "~"); ok {
		cursor = base64.RawURLEncoding.EncodeToString([]byte(raw))
	}
	set("cursor", cursor, caller&0x40 != 0)
	if page != 0 {
		q.Set("page", strconv.Itoa(page))
	}
	if perPage != 0 {
		q.Set("perPage", strconv.Itoa(perPage))
	}
	if caller&0x20 != 0 {
		q.Set("skipTotal", "1")
	}
	// The batch refuses search and nearVector (single lists answer them):
	// its entry carries the rest.
	batchURL := base + "?" + q.Encode()
	set("search", search, false)
	if near != "" || caller&0x80 != 0 {
		parts := strings.SplitN(near, "|", 4)
		q.Set("nearVector", parts[0])
		for i, k := range []string{"nearVectorField", "nearLimit", "nearMinScore"} {
			if i+1 < len(parts) {
				set(k, parts[i+1], false)
			}
		}
	}
	h := x.headers[who]
	// Markers are checked only when no input could have put one in an
	// error message.
	echo := false
	for _, s := range in {
		echo = echo || strings.Contains(strings.ToLower(s), "zq")
	}
	// A token reaches pub only.
	outOfScope := who == 3 && name != "pub"

	// The list.
	path := base + "?" + q.Encode()
	status, body := x.send(t, http.MethodGet, path, nil, h)
	x.leaks(t, who, path, body, echo)
	if status == http.StatusOK {
		var out map[string]json.RawMessage
		if err := json.Unmarshal(body, &out); err != nil || !bytes.HasPrefix(out["data"], []byte("[")) {
			t.Fatalf("GET %s: 200 without a data array: %.300s", short(path), body)
		}
		if _, ok := out["nextCursor"]; q.Has("cursor") && !ok {
			t.Fatalf("GET %s: cursor mode without nextCursor: %.300s", short(path), body)
		}
	}
	x.refused(t, path, status, who, name, outOfScope, body)

	// One record with the same projection and expansion.
	gq := url.Values{}
	if fields != "" {
		gq.Set("fields", fields)
	}
	if expand != "" {
		gq.Set("expand", expand)
	}
	path = base + "/" + x.ids[name] + "?" + gq.Encode()
	status, body = x.send(t, http.MethodGet, path, nil, h)
	x.leaks(t, who, path, body, echo)
	if status == http.StatusOK {
		var out struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil || out.Data.ID != x.ids[name] {
			t.Fatalf("GET %s: 200 without the record: %.300s", short(path), body)
		}
	}
	x.refused(t, path, status, who, name, outOfScope, body)

	// A read-only batch of one list entry.
	req := map[string]any{"requests": []map[string]any{{"method": "GET", "url": batchURL}}}
	status, body = x.send(t, http.MethodPost, "/api/v1/batch", req, h)
	x.leaks(t, who, "batch "+batchURL, body, echo)
	if status == http.StatusOK {
		var out struct {
			Data []struct {
				Status int `json:"status"`
				Body   struct {
					Data json.RawMessage `json:"data"`
				} `json:"body"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &out); err != nil || len(out.Data) != 1 || out.Data[0].Status != http.StatusOK ||
			!bytes.HasPrefix(out.Data[0].Body.Data, []byte("[")) {
			t.Fatalf("batch %s: 200 without one list: %.300s", short(batchURL), body)
		}
	}
	x.refused(t, "batch "+batchURL, status, who, name, outOfScope, body)
}

// send sends one request: a dropped connection or a 5xx fails the input,
// and every answer passes apitest.CheckCommon.
func (x *listFuzz) send(t *testing.T, method, path string, body any, h map[string]string) (int, []byte) {
	t.Helper()
	res, out, err := x.s.Send(method, path, body, h)
	if err != nil {
		t.Fatalf("%s %s: %v", method, short(path), err)
	}
	apitest.CheckCommon(t, res, out)
	switch res.StatusCode {
	case http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
	default:
		t.Fatalf("%s %s: status %d: %.300s", method, short(path), res.StatusCode, out)
	}
	return res.StatusCode, out
}

// refused checks the answers rights decide alone: no 200 from a collection
// that does not exist, from the admin-only collection for anyone but the
// admin, and a 403 for a token outside its scope.
func (x *listFuzz) refused(t *testing.T, what string, status, who int, name string, outOfScope bool, body []byte) {
	t.Helper()
	switch {
	case outOfScope && status != http.StatusForbidden:
		t.Fatalf("%s as the token scoped to pub: %d %.300s", short(what), status, body)
	case status == http.StatusOK && (name == "nope" || name == "vault" && who != 2):
		t.Fatalf("%s as %s: 200 %.300s", short(what), listFuzzCallers[who], body)
	}
}

// leaks fails when body shows a marker the caller may not see.
func (x *listFuzz) leaks(t *testing.T, who int, what string, body []byte, echo bool) {
	t.Helper()
	if echo || who == 2 {
		return
	}
	for _, m := range listFuzzMarkers {
		if who == 3 && m == "zqHIDDENzq" {
			continue // the token acts as the admin inside pub
		}
		if bytes.Contains(body, []byte(m)) {
			t.Fatalf("%s as %s shows %s: %.500s", short(what), listFuzzCallers[who], m, body)
		}
	}
}

// short cuts a long URL for a failure message.
func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

type listFuzzSeed struct {
	filter, sort, expand, fields, cursor, search, near string
	page, perPage                                      int
	caller                                             uint8
}

// caller input of FuzzListQuery for who (0-3) on collection slot.
func callerOf(who, slot int, bits uint8) uint8 { return uint8(who) | uint8(slot)<<2 | bits }

// listFuzzSeeds are ordinary lists of every parameter and the inputs of
// the security review (issue 13), also committed as files in
// testdata/fuzz/FuzzListQuery.
func listFuzzSeeds() []listFuzzSeed {
	var seeds []listFuzzSeed
	for who := range 4 {
		seeds = append(seeds,
			listFuzzSeed{caller: callerOf(who, 0, 0)},
			listFuzzSeed{filter: `(n > 1 && (flag = true || kind = "b")) || meta.a.b ?= 2 || tags ?= "x" || when < @now`, sort: "-n,title",
				expand: "note,vault,owned,author,comments_via_post", fields: "title,n,expand", page: 1, perPage: 2, caller: callerOf(who, 0, 0x20)},
			listFuzzSeed{sort: "n", cursor: "", perPage: 1, caller: callerOf(who, 0, 0x40)},
			listFuzzSeed{sort: "-created", cursor: `~[1700000000,"zzzzzzzzzzzzzzz"]`, perPage: 2, caller: callerOf(who, 1, 0)},
			listFuzzSeed{search: "apple", sort: "title", caller: callerOf(who, 0, 0)},
			listFuzzSeed{near: "[1,0,0]|emb|2|0.5", fields: "title", caller: callerOf(who, 0, 0)},
			listFuzzSeed{filter: `post.title ~ "apple"`, expand: "post.author,parent.post", caller: callerOf(who, 1, 0)},
			listFuzzSeed{filter: `owner = @request.auth.id`, expand: "owner", caller: callerOf(who, 4, 0)},
			listFuzzSeed{expand: "secret", caller: callerOf(who, 3, 0)},
			listFuzzSeed{filter: `secret = "x"`, sort: "secret", fields: "secret", caller: callerOf(who, 7, 0)},
			listFuzzSeed{expand: "pub_via_author", caller: callerOf(who, 5, 0)},
			listFuzzSeed{filter: `@collection.vault.code ?= "x" || owned.title = "mine" || author.name:lower = "n" || comments_via_post.text ?~ "f"`,
				sort: "-owned,author", expand: "owned.owner,author", caller: callerOf(who, 0, 0)},
		)
	}
	return append(seeds, listFuzzSecuritySeeds()...)
}

// listFuzzSecuritySeed is one input of the security review, with the name
// of its file in testdata/fuzz/FuzzListQuery.
type listFuzzSecuritySeed struct {
	name string
	listFuzzSeed
}

// listFuzzSecurity are the inputs of the security review (issue 13).
func listFuzzSecurity() []listFuzzSecuritySeed {
	operands := func(n int) string { // n comparisons: 2n operands
		terms := make([]string, n)
		for i := range terms {
			terms[i] = "n = " + strconv.Itoa(i)
		}
		return strings.Join(terms, " || ")
	}
	nested := func(depth int) string { return strings.Repeat("(", depth) + "n = 1" + strings.Repeat(")", depth) }
	long := func(n int) string { // a filter of exactly n characters
		head := `title != "`
		return head + strings.Repeat("a", n-len(head)-1) + `"`
	}
	cursor := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	huge := strings.TrimSuffix(strings.Repeat("1e38,", 5000), ",")
	sorts := make([]string, 2000)
	for i := range sorts {
		sorts[i] = []string{"title", "-created", "id", "note", "-updated", "nope", "-secret", "n"}[i%8]
	}
	anon, user, admin, token := 0, 1, 2, 3
	s := func(name string, who, slot int, bits uint8, sd listFuzzSeed) listFuzzSecuritySeed {
		sd.caller = callerOf(who, slot, bits)
		return listFuzzSecuritySeed{name, sd}
	}
	return []listFuzzSecuritySeed{
		s("expand-of-nothing", anon, 0, 0, listFuzzSeed{expand: "note.pub_via_note"}),
		s("expand-of-nothing-user", user, 0, 0, listFuzzSeed{expand: "note.pub_via_note,vault.pub_via_vault,owned.pub_via_owned"}),
		s("expand-of-nothing-token", token, 0, 0, listFuzzSeed{expand: "note.pub_via_note.note,comments_via_post.post"}),
		s("expand-back-chain", anon, 0, 0, listFuzzSeed{expand: "comments_via_post.post.comments_via_post.post.comments_via_post.parent"}),
		s("expand-back-chain-comments", user, 1, 0, listFuzzSeed{expand: "comments_via_parent.comments_via_parent.post.comments_via_post,post.author.pub_via_author"}),
		s("expand-depth-9", admin, 1, 0, listFuzzSeed{expand: "parent.parent.parent.parent.parent.parent.parent.parent.parent,comments_via_parent.comments_via_parent.comments_via_parent.comments_via_parent.comments_via_parent.comments_via_parent.comments_via_parent"}),
		s("expand-depth-9-anon", anon, 0, 0, listFuzzSeed{expand: "comments_via_post.post.comments_via_post.post.comments_via_post.post.comments_via_post.post.note"}),
		s("sort-2000-terms", anon, 0, 0, listFuzzSeed{sort: strings.Join(sorts, ",")}),
		s("sort-2000-terms-admin-cursor", admin, 0, 0x40, listFuzzSeed{sort: strings.Repeat("-title,", 2000)}),
		s("sort-3000-repeats", user, 0, 0, listFuzzSeed{sort: strings.Repeat("-title,", 3000)}),
		s("sort-3000-repeats-batch", token, 7, 0, listFuzzSeed{sort: strings.Repeat("n,", 3000), expand: "note"}),
		s("filter-4096-chars", anon, 0, 0, listFuzzSeed{filter: long(4096)}),
		s("filter-4097-chars", admin, 0, 0, listFuzzSeed{filter: long(4097)}),
		s("filter-50-operands", anon, 0, 0, listFuzzSeed{filter: operands(25)}),
		s("filter-52-operands", user, 0, 0, listFuzzSeed{filter: operands(26)}),
		s("filter-depth-32", anon, 0, 0, listFuzzSeed{filter: nested(32)}),
		s("filter-depth-33", token, 0, 0, listFuzzSeed{filter: nested(33)}),
		s("filter-via-at-limits", user, 0, 0, listFuzzSeed{filter: strings.Repeat("(", 31) + strings.Repeat(`comments_via_post.text ?~ "f" && `, 24) + "n > 0" + strings.Repeat(")", 31)}),
		s("cursor-not-base64", anon, 0, 0, listFuzzSeed{cursor: "!!!%%%", sort: "n"}),
		s("cursor-not-an-array", user, 0, 0, listFuzzSeed{cursor: cursor(`{"a":1}`), sort: "title"}),
		s("cursor-three-members", admin, 0, 0, listFuzzSeed{cursor: cursor(`[1,"x",2]`), sort: "n"}),
		s("cursor-object-position", token, 0, 0, listFuzzSeed{cursor: cursor(`[{"a":1},"x"]`), sort: "-created"}),
		s("cursor-trailing", anon, 1, 0, listFuzzSeed{cursor: cursor(`[1,"x"] [2]`)}),
		s("cursor-with-two-sorts", anon, 0, 0, listFuzzSeed{cursor: cursor(`[1,"x"]`), sort: "n,title"}),
		s("cursor-null-id", admin, 4, 0, listFuzzSeed{cursor: cursor(`[null,null]`), sort: "title"}),
		s("cursor-null-position", anon, 0, 0, listFuzzSeed{cursor: "~[null,\"x\"]", sort: "-when"}),
		s("cursor-type-mismatch", user, 0, 0, listFuzzSeed{cursor: "~[\"a\",\"zzzzzzzzzzzzzzz\"]", sort: "-n", perPage: 1}),
		s("cursor-number-on-text", token, 1, 0, listFuzzSeed{cursor: "~[1.5e300,\"\"]", sort: "text"}),
		s("cursor-huge-number", user, 0, 0, listFuzzSeed{cursor: cursor(`[1e999,"x"]`), sort: "n"}),
		s("near-nan", anon, 0, 0, listFuzzSeed{near: "[NaN,0,0]|emb"}),
		s("near-inf", user, 0, 0, listFuzzSeed{near: "Inf,-Inf,1|emb|10|NaN"}),
		s("near-overflow", admin, 0, 0, listFuzzSeed{near: "[1e39,0,0]|emb|1000|-Inf"}),
		s("near-huge-array", anon, 0, 0, listFuzzSeed{near: huge + "|emb"}),
		s("near-4096-zeros", token, 0, 0, listFuzzSeed{near: strings.TrimSuffix(strings.Repeat("0,", 4096), ",") + "|emb|0|1e308"}),
		s("near-wrong-field", admin, 0, 0, listFuzzSeed{near: "[1,0,0]|title|5"}),
		s("near-hidden-field", anon, 0, 0x80, listFuzzSeed{near: "|secret|99999999999999999999|0.1"}),
		s("near-on-admin-only", user, 3, 0, listFuzzSeed{near: "[1,0,0]|emb"}),
		s("search-control-chars", anon, 0, 0, listFuzzSeed{search: "\x00apple\x01\x7f\"' OR 1=1 --\t\r\n*NEAR(\x00)"}),
		s("search-nul", token, 0, 0, listFuzzSeed{search: "\x00", sort: "-created"}),
		s("search-40-terms", user, 0, 0, listFuzzSeed{search: strings.Repeat(`a" b* ^c `, 14)}),
		s("search-no-searchable", anon, 1, 0, listFuzzSeed{search: "first"}),
		s("fields-unknown", anon, 0, 0, listFuzzSeed{fields: "nope,secret,expand.note,_score,__proto__,,", expand: "nope,note"}),
		s("fields-unknown-admin", admin, 5, 0, listFuzzSeed{fields: "password,tokenKey,email,nope", expand: "pub_via_author"}),
		s("page-extremes", anon, 0, 0x20, listFuzzSeed{page: 1 << 62, perPage: -1 << 62}),
		s("page-max", admin, 0, 0, listFuzzSeed{page: 9223372036854775807, perPage: 9223372036854775807}),
	}
}

func listFuzzSecuritySeeds() []listFuzzSeed {
	var out []listFuzzSeed
	for _, s := range listFuzzSecurity() {
		out = append(out, s.listFuzzSeed)
	}
	return out
}
