package filter

import (
	"errors"
	"testing"
)

// TestCompileErrorsSayWhere: an expression that parses but does not
// compile names the offset of the operand at fault, as a syntax error does,
// so a rule refused at save time can point at its mistake.
func TestCompileErrorsSayWhere(t *testing.T) {
	base := testColl()
	env := testEnv()
	env.AllowHidden = true
	env.AuthField = func(name string) bool { return name == "name" }
	for _, c := range []struct {
		src  string
		pos  int
		want string
	}{
		{`titel = "a"`, 0, `filter: unknown field "titel" at offset 0`},
		{`title = "a" && nn > 1`, 15, `filter: unknown field "nn" at offset 15`},
		{`n = 1 || (title:lower = "a" && meta.x ?= n.y)`, 41, `filter: field "n" has no member "y" at offset 41`},
		{`@collection.nope.x = 1`, 0, `filter: unknown collection "nope" at offset 0`},
		{`title = @request.auth.nick`, 8, `filter: unknown field "nick" of @request.auth (no auth collection has it) at offset 8`},
		{`x_via_y.z = 1`, 0, `filter: unknown collection "x" in back-relation at offset 0`},
		{`n:lower = 1`, 0, `filter: :lower needs a text field at offset 0`},
		{`title = tags`, 0, `filter: a multi-valued operand must be on the left of = at offset 0`},
	} {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		_, err = CompileSQL(e, base, oneColl{base}, env, "_r")
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Fatalf("%q: got %v, want a CompileError", c.src, err)
		}
		if ce.Pos != c.pos || err.Error() != c.want {
			t.Errorf("%q: got %q (pos %d), want %q (pos %d)", c.src, err, ce.Pos, c.want, c.pos)
		}
	}
}

// TestAuthFieldsChecked: with AuthField set, @request.auth.<name> must be
// a system member or a field some auth collection has, for guests too;
// without it any name reads (as empty when absent).
func TestAuthFieldsChecked(t *testing.T) {
	base := testColl()
	for _, c := range []struct {
		src   string
		known func(string) bool
		guest bool
		ok    bool
	}{
		{`@request.auth.id != ""`, func(string) bool { return false }, false, true},
		{`@request.auth.collectionName = "users"`, func(string) bool { return false }, false, true},
		{`@request.auth.email_verified = true`, func(string) bool { return false }, true, true},
		{`@request.auth.name = "A"`, func(n string) bool { return n == "name" }, false, true},
		{`@request.auth.nmae = "A"`, func(n string) bool { return n == "name" }, false, false},
		{`@request.auth.nmae = "A"`, func(n string) bool { return n == "name" }, true, false},
		{`@request.auth.nmae:isset = false`, func(n string) bool { return n == "name" }, false, false},
		{`@request.auth.anything = "A"`, nil, false, true},
	} {
		env := testEnv()
		env.AuthField = c.known
		if c.guest {
			env.Auth = nil
		}
		e, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		_, err = CompileSQL(e, base, oneColl{base}, env, "_r")
		if (err == nil) != c.ok {
			t.Errorf("%q (guest %v): compile error %v, want ok=%v", c.src, c.guest, err, c.ok)
		}
		_, err = Eval(e, base, Record{"id": "a"}, env)
		if (err == nil) != c.ok {
			t.Errorf("%q (guest %v): eval error %v, want ok=%v", c.src, c.guest, err, c.ok)
		}
	}
}

// TestHiddenReadsAsAbsent: a caller who may not read hidden fields, or
// another collection, is told the same as for a name that does not exist,
// so a filter's error reveals nothing of the schema the caller cannot see.
func TestHiddenReadsAsAbsent(t *testing.T) {
	base := testColl()
	env := testEnv()
	env.Readable = func(*Collection) bool { return false }
	other := &Collection{ID: "col_o", Name: "o", Fields: []*FieldDef{{Name: "id", Type: "id"}, {Name: "x", Type: "text"}}}
	res := twoColls{base, other}
	for _, c := range []struct{ src, want string }{
		{`secret = "a"`, `filter: unknown field "secret" at offset 0`},
		{`nosuch = "a"`, `filter: unknown field "nosuch" at offset 0`},
		{`@collection.o.x = "a"`, `filter: unknown collection "o" at offset 0`},
		{`@collection.nosuch.x = "a"`, `filter: unknown collection "nosuch" at offset 0`},
		{`o_via_x.id = "a"`, `filter: unknown collection "o" in back-relation at offset 0`},
	} {
		e, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = CompileSQL(e, base, res, env, "_r")
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

type twoColls [2]*Collection

func (t twoColls) FilterCollection(name string) *Collection {
	for _, c := range t {
		if c.Name == name || c.ID == name {
			return c
		}
	}
	return nil
}
