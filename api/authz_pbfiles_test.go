package api_test

import (
	"net/http"
	"testing"
)

// pathPBFileDownload reads every file of the fixture through PocketBase's
// path, /api/files/{collection}/{record}/{name}: a caller gets a file's
// bytes only where svcd's own download gives them (PocketBase answers a
// refusal with 404, so only the success is compared), and no answer holds
// a file the caller may not fetch.
func pathPBFileDownload(t *testing.T, x *matrix, c mcaller) {
	for _, m := range matrixFiles {
		name := x.files[m.coll+"/"+m.rec+"/"+m.field]
		for _, q := range []string{"", "?thumb=10x10", "?download=1"} {
			path := "/api/files/" + m.coll + "/" + x.id(m.coll, m.rec) + "/" + name + q
			st, body, _ := x.get(t, c, "GET", path, nil, map[string]string{"Range": "bytes=0-100"})
			x.fileLeaks(t, c, "pb download "+m.label()+q, body)
			ok := st == http.StatusOK || st == http.StatusPartialContent
			if want := c.wantDownload(m) == 200; ok != want {
				t.Errorf("%s: PocketBase download %s%s: %d, want success %v", c.name, m.label(), q, st, want)
			}
		}
	}
}
