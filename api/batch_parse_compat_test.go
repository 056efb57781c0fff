package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
)

// TestBatchBodyDecodesAsEncodingJSON: the batch parser (segmentio's)
// gives entry bodies exactly what encoding/json with UseNumber gives:
// json.Number numbers, strings with escapes and invalid UTF-8 replaced,
// nested values, duplicate keys (the last wins).
func TestBatchBodyDecodesAsEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"a":1,"b":-2.50e+3,"c":"x\u00e9\ud83d\ude00\n","d":null,"e":true,"f":[1,{"g":[]}],"h":{}}`,
		`{"dup":1,"dup":"second"}`,
		"{\"bad\":\"\xff\xfe\"}",
		`{"big":123456789012345678901234567890,"tiny":1e-400}`,
		`{}`,
	}
	for _, body := range bodies {
		reqs, _, err := parseBatchBody([]byte(`{"requests":[{"method":"POST","url":"/api/v1/posts","body":` + body + `}]}`))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var want map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(body)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := reqs[0].Op.Fields; !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", body, got, want)
		}
	}
	for _, bad := range []string{`{"requests":[]} x`, `{"requests":[`, `{"requests":[{"body":{"a":01}}]}`, "{\"requests\":[{\"method\":\"POST\",\"url\":\"/api/v1/p\",\"body\":{\"a\":1,}}]}"} {
		if _, _, err := parseBatchBody([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// The fast path for plain entry URLs gives what url.Parse gives.
func TestEntryURLAgreesWithURLParse(t *testing.T) {
	for _, raw := range []string{"/api/v1/posts", "/api/v1/posts/abc", "/api/v1/po sts", "/api/v1/p\x01", "/api/v1/p\x7f",
		"/api/v1/posts?x=1", "/api/v1/p%41", "/a:b", "//host/api/v1/posts", "/api/v1/posts#f", "/api/v1/é", "/"} {
		path, q, ok := entryURL(raw)
		u, err := url.Parse(raw)
		wantOK := err == nil && u.Scheme == "" && u.Host == "" && u.Opaque == "" && u.Fragment == ""
		if ok != wantOK {
			t.Errorf("%q: ok %v, url.Parse says %v (%v)", raw, ok, wantOK, err)
			continue
		}
		if ok && (path != u.Path || (len(q) > 0 || len(u.Query()) > 0) && !reflect.DeepEqual(q, u.Query())) {
			t.Errorf("%q: path %q query %v, url.Parse gives %q %v", raw, path, q, u.Path, u.Query())
		}
	}
}
