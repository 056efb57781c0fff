package schema

import "testing"

func TestFileCleanOptions(t *testing.T) {
	runClean(t, FieldFile, []optCase{
		{name: "none", want: Options{}},
		{name: "mime normalized", opts: Options{MimeTypes: []string{" Image/PNG ", "image/*", "image/png", "application/vnd.ms-excel"}},
			want: Options{MimeTypes: []string{"image/png", "image/*", "application/vnd.ms-excel"}}},
		{name: "mime without subtype", opts: Options{MimeTypes: []string{"png"}}, msg: `mimeTypes: "png" is not a type/subtype`},
		{name: "mime wildcard type", opts: Options{MimeTypes: []string{"*/*"}}, msg: "mimeTypes"},
		{name: "mime empty", opts: Options{MimeTypes: []string{""}}, msg: "mimeTypes"},
		{name: "max size", opts: Options{FileMaxSize: 1 << 20}, want: Options{FileMaxSize: 1 << 20}},
		{name: "negative max size", opts: Options{FileMaxSize: -1}, msg: "maxSize cannot be negative"},
		{name: "empty view rule kept", opts: Options{FileViewRule: strp("")}, want: Options{FileViewRule: strp("")}},
		{name: "view rule kept", opts: Options{FileViewRule: strp("@request.auth.id != ''")}, want: Options{FileViewRule: strp("@request.auth.id != ''")}},
		{name: "others dropped", opts: allOptions(), want: Options{
			Multiple: true, FileMaxSize: 100, MimeTypes: []string{"image/png"}, FileViewRule: strp(""),
			RequireAuth: true, Protected: true, OneTimeToken: true, BindTokenIP: true, AuditDownloads: true,
		}},
	})
}

func TestFileNormalize(t *testing.T) {
	multi := Field{Options: Options{Multiple: true}}
	runNormalize(t, FieldFile, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "multi nil", f: multi, in: nil, want: nil},
		{name: "name", in: "a.png", msg: "file fields are set by uploading to /api/v1/files/"},
		{name: "empty", in: "", msg: "uploading"},
		{name: "array", f: multi, in: []any{}, msg: "uploading"},
	})
}

func TestFileAppendJSON(t *testing.T) {
	multi := Field{Options: Options{Multiple: true}}
	runAppend(t, FieldFile, []outCase{
		{name: "nil", stored: nil, want: `null`},
		{name: "empty", stored: "", want: `null`},
		{name: "name", stored: "0f1e.png", want: `"0f1e.png"`},
		{name: "multi nil", f: multi, stored: nil, want: `[]`},
		{name: "multi", f: multi, stored: `["a.png","b.jpg"]`, want: `["a.png","b.jpg"]`},
		{name: "multi from single", f: multi, stored: "a.png", want: `["a.png"]`},
	})
	runZero(t, FieldFile, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "set", stored: "a.png", want: false},
		{name: "multi empty", f: multi, stored: "[]", want: true},
		{name: "multi set", f: multi, stored: `["a"]`, want: false},
	})
}
