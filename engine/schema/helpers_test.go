package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

func num(s string) json.Number { return json.Number(s) }

func strp(s string) *string { return &s }

// fakeLookup resolves collections by name or id from a fixed list.
type fakeLookup []*Collection

func (l fakeLookup) Collection(nameOrID string) *Collection {
	for _, c := range l {
		if c.Name == nameOrID || c.ID == nameOrID {
			return c
		}
	}
	return nil
}

// normCase is one Normalize call: with msg == "" it must succeed with want,
// otherwise fail with a message containing msg and a nil stored value.
type normCase struct {
	name string
	f    Field
	in   any
	want any
	msg  string
}

func runNormalize(t *testing.T, typ string, cases []normCase) {
	t.Helper()
	ft, ok := TypeOf(typ)
	if !ok {
		t.Fatalf("TypeOf(%q) unknown", typ)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Name, f.Type = "f", typ
			got, msg := ft.Normalize(&f, c.in)
			if c.msg != "" {
				if msg == "" || !strings.Contains(msg, c.msg) {
					t.Fatalf("Normalize(%#v) msg = %q, want containing %q (stored %#v)", c.in, msg, c.msg, got)
				}
				if got != nil {
					t.Fatalf("Normalize(%#v) failed but stored %#v", c.in, got)
				}
				return
			}
			if msg != "" {
				t.Fatalf("Normalize(%#v) msg = %q, want success", c.in, msg)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Normalize(%#v) = %#v (%T), want %#v (%T)", c.in, got, got, c.want, c.want)
			}
			// Whatever Normalize stores must print as valid JSON.
			if out := ft.AppendJSON(nil, &f, got); !json.Valid(out) {
				t.Fatalf("AppendJSON(%#v) = %q is not valid JSON", got, out)
			}
		})
	}
}

// outCase is one AppendJSON call with its exact expected output.
type outCase struct {
	name   string
	f      Field
	stored any
	want   string
}

func runAppend(t *testing.T, typ string, cases []outCase) {
	t.Helper()
	ft, _ := TypeOf(typ)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Name, f.Type = "f", typ
			out := ft.AppendJSON([]byte("x:"), &f, c.stored)
			if !strings.HasPrefix(string(out), "x:") {
				t.Fatalf("AppendJSON dropped the buffer prefix: %q", out)
			}
			got := out[2:]
			if !json.Valid(got) {
				t.Fatalf("AppendJSON(%#v) = %q is not valid JSON", c.stored, got)
			}
			if string(got) != c.want {
				t.Fatalf("AppendJSON(%#v) = %s, want %s", c.stored, got, c.want)
			}
		})
	}
}

// optCase is one CleanOptions call: with msg == "" it must succeed leaving
// exactly want, otherwise fail with a message containing msg.
type optCase struct {
	name   string
	opts   Options
	lookup Lookup
	want   Options
	msg    string
}

func runClean(t *testing.T, typ string, cases []optCase) {
	t.Helper()
	ft, _ := TypeOf(typ)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &Field{Name: "f", Type: typ, Options: c.opts}
			msg := ft.CleanOptions(f, c.lookup)
			if c.msg != "" {
				if !strings.Contains(msg, c.msg) {
					t.Fatalf("CleanOptions msg = %q, want containing %q", msg, c.msg)
				}
				return
			}
			if msg != "" {
				t.Fatalf("CleanOptions msg = %q, want success", msg)
			}
			if !reflect.DeepEqual(f.Options, c.want) {
				t.Fatalf("CleanOptions left %+v, want %+v", f.Options, c.want)
			}
		})
	}
}

// zeroCase is one IsZero call.
type zeroCase struct {
	name   string
	f      Field
	stored any
	want   bool
}

func runZero(t *testing.T, typ string, cases []zeroCase) {
	t.Helper()
	ft, _ := TypeOf(typ)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.Name, f.Type = "f", typ
			if got := ft.IsZero(&f, c.stored); got != c.want {
				t.Fatalf("IsZero(%#v) = %v, want %v", c.stored, got, c.want)
			}
		})
	}
}

// allOptions sets at least one option of every type, to check that each
// type drops the ones that do not apply.
func allOptions() Options {
	return Options{
		Min: ptr(1), Max: ptr(5), Pattern: "a+", Searchable: true, Encrypted: false,
		DomainsOnly: []string{"example.com"}, Integer: true, OnCreate: true, OnUpdate: true,
		Values: []string{"a"}, Multiple: true, MaxSelect: 2, MaxSize: 10,
		Collection: "posts", Cascade: true, Dimensions: 3, FileMaxSize: 100,
		MimeTypes: []string{"image/png"}, FileViewRule: strp(""), RequireAuth: true,
		Protected: true, OneTimeToken: true, BindTokenIP: true, AuditDownloads: true,
	}
}
