package docs

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The doc test's own parts, without svcd: the parser, the matcher, and a
// real bash session against a small HTTP server, where a broken example
// must be reported with its file, line and difference.

const sampleDoc = "# Title\n" + // 1
	"\n" + // 2
	"```sh\n" + // 3
	"X=$(echo 41)\n" + // 4
	"echo '{\"a\":1,\"b\":[1,2,3],\"c\":\"eyJhbGc\"}'\n" + // 5
	"# => {\"a\":1,\"b\":[...,3],\n" + // 6
	"#     \"c\":\"eyJ...\",...}\n" + // 7
	"\n" + // 8
	"# a comment between segments\n" + // 9
	"curl -s \"$URL/missing\"\n" + // 10
	"# => 404 {\"error\":\"...\"}\n" + // 11
	"```\n" + // 12
	"\n" + // 13
	"```sh\n" + // 14
	"# doctest: skip (needs root)\n" + // 15
	"ip netns add x\n" + // 16
	"```\n" + // 17
	"\n" + // 18
	"```console\n" + // 19
	"$ curl -s localhost:8090/_/health\n" + // 20
	"```\n" + // 21
	"\n" + // 22
	"```sh\n" + // 23
	"echo $((X + 1))\n" + // 24
	"# => 42\n" + // 25
	"curl -s \"$URL/ok\" >/dev/null\n" + // 26
	"```\n" // 27

func TestParseDoc(t *testing.T) {
	d := parseDoc("sample.md", sampleDoc)
	if len(d.problems) != 1 || d.problems[0].line != 20 || !strings.Contains(d.problems[0].msg, "```console") {
		t.Fatalf("problems: %v; want one, the curl of the console block at line 20", d.problems)
	}
	if len(d.blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(d.blocks))
	}
	b := d.blocks[0]
	if b.line != 3 || b.skip != "" || len(b.segments) != 2 {
		t.Fatalf("block 1: %+v", b)
	}
	s := b.segments[0]
	if s.first != 4 || s.last != 5 || len(s.expects) != 1 || s.expects[0].line != 6 {
		t.Errorf("segment 1: %+v", s)
	}
	if e := s.expects[0]; e.status != 0 || !strings.HasSuffix(e.fragment, `"c":"eyJ...",...}`) {
		t.Errorf("continued expectation: %+v", e)
	}
	if s := b.segments[1]; s.first != 10 || s.expects[0].status != 404 || s.expects[0].fragment != `{"error":"..."}` {
		t.Errorf("segment 2: %+v", s)
	}
	if d.blocks[1].skip != "needs root" {
		t.Errorf("skip reason %q", d.blocks[1].skip)
	}
	last := d.blocks[2].segments
	if len(last) != 2 || last[0].expects[0].fragment != "42" || last[0].expects[0].status != 0 || len(last[1].expects) != 0 || last[1].first != 26 {
		t.Errorf("block 3: %+v", last)
	}
}

func TestParseProblems(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"```sh\n# doctest: skip\nx\n```\n", "needs a reason"},
		{"```sh\n# => 200\n```\n", "no command before it"},
		{"```sh\necho\n# => {\"a\":\n```\n", "not closed"},
		{"```sh\necho\n# => {\"a\" 1}\n```\n", "cannot read the expected JSON"},
	} {
		d := parseDoc("p.md", c.doc)
		if len(d.problems) == 0 || !strings.Contains(d.problems[0].msg, c.want) {
			t.Errorf("%q: problems %v, want %q", c.doc, d.problems, c.want)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, actual string
		why             string // "" = matches
	}{
		{`{"a":1}`, `{"a":1,"b":2}`, ""},
		{`{"a":1,...}`, `{"a":1.0}`, ""},
		{`{"a":"x..."}`, `{"a":"xyz"}`, ""},
		{`{"a":...}`, `{"a":null}`, ""},
		{`{"t":1796...}`, `{"t":1796123456}`, ""},
		{`{"d":[]}`, `{"d":[]}`, ""},
		{`{"d":[...]}`, `{"d":[1,2]}`, ""},
		{`[{"id":"b"},...]`, `[{"id":"b"},{"id":"c"}]`, ""},
		{`[...,{"id":"c"}]`, `[{"id":"b"},{"id":"c"}]`, ""},
		{`{"a":true,"n":null}`, `{"a":true,"n":null}`, ""},
		{`{"a":2}`, `{"a":1}`, "$.a: want 2, got 1"},
		{`{"a":{"b":"x"}}`, `{"a":{"b":"y"}}`, `$.a.b: want "x", got "y"`},
		{`{"z":1}`, `{"a":1}`, `$: no member "z" (members: a)`},
		{`{"d":[]}`, `{"d":[1]}`, "$.d: want 0 elements, got 1"},
		{`{"d":[1,...]}`, `{"d":[2,3]}`, "$.d: no element matches element 0"},
		{`{"a":"1"}`, `{"a":1}`, `$.a: want a string "1", got 1`},
		{`{"a":false}`, `{"a":true}`, "$.a: want false, got true"},
	} {
		p, err := parsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		items := outputItems(c.actual)
		if len(items) != 1 || !items[0].isJSON {
			t.Fatalf("%s: items %+v", c.actual, items)
		}
		why := p.match(items[0].json, "$")
		if c.why == "" && why != "" || c.why != "" && !strings.HasPrefix(why, c.why) {
			t.Errorf("%s against %s: %q, want %q", c.pattern, c.actual, why, c.why)
		}
	}
}

func TestMatchOutput(t *testing.T) {
	out := "HTTP/1.1 201 Created\r\nEtag: W/\"abc-1\"\r\n\r\n{\n  \"data\": {\"id\": \"abc\"}\n}\n{\"x\":2}\n401 401 429 \n"
	ok := []expect{
		{fragment: "HTTP/1.1 201 Created"},
		{fragment: `Etag: W/"..."`},
		{fragment: `{"data":{"id":"abc"}}`},
		{fragment: `{"x":2}`},
		{fragment: "401 401 429"},
	}
	if bad, why := matchOutput(out, ok); bad != nil {
		t.Errorf("%s: %s", bad.fragment, why)
	}
	for _, c := range []struct {
		expects []expect
		why     string
	}{
		{[]expect{{fragment: `{"x":3}`}}, "the answer differs: $.x: want 3, got 2"},
		{[]expect{{fragment: `{"x":2}`}, {fragment: `{"data":...}`}}, "no line after"},
		{[]expect{{fragment: "HTTP/1.1 200 OK"}}, `no line of the output is "HTTP/1.1 200 OK"`},
		{[]expect{{fragment: "401"}}, "no line of the output"}, // text matches whole lines
	} {
		bad, why := matchOutput(out, c.expects)
		if bad == nil || !strings.Contains(why, c.why) {
			t.Errorf("%v: %q, want %q", c.expects, why, c.why)
		}
	}
}

// TestRunDocReportsBreakage runs a small doc in a real bash session with
// curl against a local HTTP server: variables carry from block to block,
// statuses are read, and each deliberately wrong expectation is a failure
// that names the file, the line and the difference.
func TestRunDocReportsBreakage(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("needs %s", tool)
			}
			t.Skipf("needs %s", tool)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"data":{"ok":true}}`))
		case "/fail":
			w.WriteHeader(500)
			w.Write([]byte(`{"error":"boom","code":500}`))
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"not found","code":404}`))
		}
	}))
	defer srv.Close()

	run := func(t *testing.T, text string) []failure {
		dir := t.TempDir()
		work, tmp := filepath.Join(dir, "w"), filepath.Join(dir, "t")
		os.Mkdir(work, 0o755)
		os.Mkdir(tmp, 0o755)
		s, err := startSession(work, tmp, append(os.Environ(), "URL="+srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		return runDoc(parseDoc("sample.md", text), s, func(s string) string { return s })
	}

	if f := run(t, sampleDoc); len(f) != 0 {
		t.Fatalf("the sample doc should pass: %v", f)
	}
	broken := []struct{ from, to, want string }{
		// A changed fragment: the file, the line of the `# =>`, the difference.
		{`# => {"a":1,`, `# => {"a":2,`, "sample.md:6: the answer differs: $.a: want 2, got 1"},
		// A changed status.
		{`# => 404 {`, `# => 200 {`, "sample.md:11: want HTTP status 200, got 404"},
		// A text answer.
		{"# => 42", "# => 43", `sample.md:25: no line of the output is "43"`},
		// A call with no `# =>` must succeed.
		{`"$URL/ok" >/dev/null`, `"$URL/fail" >/dev/null`, "sample.md:26: curl call 1 answered 500"},
		// A command that fails.
		{"echo $((X + 1))", "false", "sample.md:24: the command exited with status 1"},
	}
	for _, b := range broken {
		text := strings.Replace(sampleDoc, b.from, b.to, 1)
		if text == sampleDoc {
			t.Fatalf("%q is not in the sample", b.from)
		}
		fails := run(t, text)
		if len(fails) == 0 || !strings.HasPrefix(fails[0].String(), b.want) {
			t.Errorf("with %q: failures %v, want one starting %q", b.to, fails, b.want)
		}
	}
}
