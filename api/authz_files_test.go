package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// The files' side of the authorization matrix (issue 18): every file of
// the fixture holds its marker as content, and each caller downloads it
// directly, through a file token it asks for, and uploads through the
// files endpoint and the record endpoints' multipart forms.

// matrixFiles are the file fields of the fixture per collection and
// record: owned's doc (the collection's owner rule), pub's pic (public)
// and att (viewRule "": admins only), vault's vdoc (an admin-only
// collection).
var matrixFiles = []marker{
	{"owned", "oa", "doc"}, {"owned", "ob", "doc"},
	{"pub", "pa", "pic"}, {"pub", "pb", "pic"}, {"pub", "pa", "att"}, {"pub", "pb", "att"},
	{"vault", "va", "vdoc"},
}

// adminOnlyFiles are the file fields whose viewRule is "".
var adminOnlyFiles = map[string][]string{"pub": {"att"}}

// uploadFiles stores each file of matrixFiles as the owner.
func (x *matrix) uploadFiles(t *testing.T) {
	t.Helper()
	for _, m := range matrixFiles {
		obj := apitest.Obj(t, uploadOK(t, x.s, m.coll, x.id(m.coll, m.rec), m.field, x.s.AdminHeaders(t, nil),
			file("file", m.field+".txt", []byte(m.String()))))
		x.files[m.coll+"/"+m.rec+"/"+m.field] = obj["filename"].(string)
	}
}

// mayDownload reports whether c may fetch the file of m.
func (c mcaller) mayDownload(m marker) bool {
	return c.mayView(m.coll, m.rec) && (c.full(m.coll) || !slices.Contains(adminOnlyFiles[m.coll], m.field))
}

// wantDownload is the status a download of m answers c.
func (c mcaller) wantDownload(m marker) int {
	switch st := c.wantStatus(m.coll, m.rec); {
	case st != 200:
		return st
	case !c.mayDownload(m):
		return 403
	}
	return 200
}

// fileLeaks reports the file markers body holds that c may not fetch.
func (x *matrix) fileLeaks(t *testing.T, c mcaller, what string, body []byte) {
	t.Helper()
	for _, m := range matrixFiles {
		if strings.Contains(string(body), m.String()) && !c.mayDownload(m) {
			t.Errorf("LEAK %s via %s (%s): file %s", c.name, x.path, what, m.label())
		}
	}
}

func pathFileDownload(t *testing.T, x *matrix, c mcaller) {
	for _, m := range matrixFiles {
		name := x.files[m.coll+"/"+m.rec+"/"+m.field]
		for _, q := range []string{"", "?thumb=10x10", "?download=1"} {
			st, body, _ := x.get(t, c, "GET", fileURL(name)+q, nil, map[string]string{"Range": "bytes=0-100"})
			x.fileLeaks(t, c, "download "+m.label()+q, body)
			want := c.wantDownload(m)
			if want == 200 {
				want = http.StatusPartialContent
			}
			if st != want {
				t.Errorf("%s: download %s%s: %d, want %d", c.name, m.label(), q, st, want)
			}
			if st == http.StatusPartialContent && string(body) != m.String() {
				t.Errorf("%s: download %s: %q", c.name, m.label(), body)
			}
		}
	}
}

// pathFileToken: a token is issued only to a signed-in caller who may
// download the file, and opens only that file, for anyone holding it.
func pathFileToken(t *testing.T, x *matrix, c mcaller) {
	for _, m := range matrixFiles {
		name := x.files[m.coll+"/"+m.rec+"/"+m.field]
		st, body, _ := x.get(t, c, "POST", "/api/v1/files/"+m.coll+"/"+x.id(m.coll, m.rec)+"/"+m.field+"/"+name+"/token", nil, nil)
		want := c.wantDownload(m)
		if c.kind == kindAnon || c.kind == kindAdmin && c.role == "viewer" {
			want = 401
		}
		if st != want {
			t.Errorf("%s: token for %s: %d, want %d", c.name, m.label(), st, want)
		}
		if st != 200 {
			continue
		}
		tok := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
		st, body, _ = x.get(t, mcaller{name: "anonymous with " + c.name + "'s token"}, "GET", fileURL(name)+"?token="+tok, nil, nil)
		x.fileLeaks(t, c, "download "+m.label()+" with a token", body)
		if st != 200 || string(body) != m.String() {
			t.Errorf("%s: download %s with its token: %d %q", c.name, m.label(), st, body)
		}
		for _, other := range matrixFiles {
			if other != m {
				st, body, _ := x.get(t, c, "GET", fileURL(x.files[other.coll+"/"+other.rec+"/"+other.field])+"?token="+tok, nil, nil)
				if st != 403 && st != 401 {
					t.Errorf("%s: a token for %s opens %s: %d %q", c.name, m.label(), other.label(), st, body)
				}
			}
		}
	}
}

// mayWrite reports whether c may change records of coll whose update (or
// create) rule is rule: admins with a data role and tokens with write
// scope on it bypass; others need a rule other than null.
func (c mcaller) mayWrite(coll string, ruleNull bool) bool {
	switch c.kind {
	case kindAdmin:
		return c.role != "viewer"
	case kindToken:
		for _, s := range c.scopes {
			if s == "admin" || s == "write" || s == "collection:"+coll+":write" || s == "collection:"+coll+":*" {
				return true
			}
		}
		return false
	case kindUser:
		return !ruleNull
	}
	return false
}

// pathFileUpload: uploads through the files endpoint and multipart record
// writes succeed exactly for the callers the rules admit. owned's update
// rule is null (admins only); scratch's create rule is "" (anyone signed
// in: files need authentication).
func pathFileUpload(t *testing.T, x *matrix, c mcaller) {
	m := marker{"owned", "oa", "doc"}
	st, body, _ := x.sendForm(t, c, "POST", "/api/v1/files/owned/"+x.id("owned", "oa")+"/doc", file("file", "doc.txt", []byte(m.String())))
	if ok := st == 201; ok != c.mayWrite("owned", true) {
		t.Errorf("%s: upload to %s: %d %s", c.name, m.label(), st, body)
	} else if ok {
		x.files["owned/oa/doc"] = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["filename"].(string)
	}
	st, body, _ = x.sendForm(t, c, "PATCH", "/api/v1/owned/"+x.id("owned", "oa"), file("doc", "doc.txt", []byte(m.String())))
	if ok := st == 200; ok != c.mayWrite("owned", true) {
		t.Errorf("%s: multipart update of %s: %d %s", c.name, m.label(), st, body)
	} else if ok {
		x.files["owned/oa/doc"] = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["doc"].(string)
	}
	x.leaks(t, c, "multipart update", body)
	st, body, _ = x.sendForm(t, c, "POST", "/api/v1/scratch", value("n", "1"), file("att", "s.txt", []byte("scratch")))
	want := c.mayWrite("scratch", false) && c.kind != kindAnon
	if ok := st == 201; ok != want {
		t.Errorf("%s: multipart create with a file: %d %s", c.name, st, body)
	}
	if c.kind == kindAnon && st != 401 {
		t.Errorf("%s: an anonymous upload answered %d, not 401", c.name, st)
	}
}

// sendForm sends a multipart request as c.
func (x *matrix) sendForm(t *testing.T, c mcaller, method, path string, parts ...formPart) (int, []byte, http.Header) {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return x.get(t, c, method, path, body, map[string]string{"Content-Type": ct})
}

// pathFileAdmin: the admin's read of stored files (GET /admin/files and
// /admin/files/:c) names files and records, app data: editors and up
// and tokens with the admin scope read them, and see every stored file
// of the collection; everyone else is refused and learns no name.
func pathFileAdmin(t *testing.T, x *matrix, c mcaller) {
	may := c.kind == kindAdmin && roleAtLeast(c.role, "editor") || c.kind == kindToken && hasScope(c.scopes, "admin")
	check := func(path string, names []string) {
		st, body, _ := x.get(t, c, "GET", path, nil, nil)
		x.leaks(t, c, path, body)
		switch {
		case may && st != http.StatusOK:
			t.Errorf("%s: GET %s: %d %s", c.name, path, st, body)
		case !may && st != http.StatusUnauthorized && st != http.StatusForbidden:
			t.Errorf("%s: GET %s: %d, want 401 or 403", c.name, path, st)
		}
		for _, n := range names {
			if in := strings.Contains(string(body), n); in != may {
				t.Errorf("%s: GET %s holds %s: %v", c.name, path, n, in)
			}
		}
	}
	check("/api/v1/admin/files", []string{`"collection":"owned"`, `"collection":"vault"`})
	for _, coll := range []string{"owned", "pub", "vault"} {
		var names []string
		for _, m := range matrixFiles {
			if m.coll == coll {
				names = append(names, x.files[m.coll+"/"+m.rec+"/"+m.field])
			}
		}
		check("/api/v1/admin/files/"+coll+"?perPage=500", names)
	}
}
