package schema

import "testing"

const (
	id1 = "abcdefghij12345"
	id2 = "zzzzzzzzzz00000"
	id3 = "000000000000001"
)

func TestRelationCleanOptions(t *testing.T) {
	lookup := fakeLookup{{ID: "col_aaaaaaaaaaaaaaa", Name: "posts"}}
	runClean(t, FieldRelation, []optCase{
		{name: "by name", lookup: lookup, opts: Options{Collection: "posts"}, want: Options{Collection: "col_aaaaaaaaaaaaaaa"}},
		{name: "by id", lookup: lookup, opts: Options{Collection: "col_aaaaaaaaaaaaaaa"}, want: Options{Collection: "col_aaaaaaaaaaaaaaa"}},
		{name: "missing", lookup: lookup, msg: "collection is required"},
		{name: "unknown", lookup: lookup, opts: Options{Collection: "nope"}, msg: `collection "nope" does not exist`},
		{name: "nil lookup", opts: Options{Collection: "posts"}, msg: `collection "posts" cannot be resolved`},
		{name: "cascade", lookup: lookup, opts: Options{Collection: "posts", Cascade: true},
			want: Options{Collection: "col_aaaaaaaaaaaaaaa", Cascade: true}},
		{name: "restrict", lookup: lookup, opts: Options{Collection: "posts", Restrict: true},
			want: Options{Collection: "col_aaaaaaaaaaaaaaa", Restrict: true}},
		{name: "both", lookup: lookup, opts: Options{Collection: "posts", Cascade: true, Restrict: true}, msg: "cascade and restrict cannot both be set"},
		{name: "multiple", lookup: lookup, opts: Options{Collection: "posts", Multiple: true, MaxSelect: 5},
			want: Options{Collection: "col_aaaaaaaaaaaaaaa", Multiple: true, MaxSelect: 5}},
		{name: "max_select dropped on single", lookup: lookup, opts: Options{Collection: "posts", MaxSelect: 5},
			want: Options{Collection: "col_aaaaaaaaaaaaaaa"}},
		{name: "negative max_select", lookup: lookup, opts: Options{Collection: "posts", Multiple: true, MaxSelect: -2}, msg: "max_select cannot be negative"},
		{name: "others dropped", lookup: lookup, opts: allOptions(),
			want: Options{Collection: "col_aaaaaaaaaaaaaaa", Cascade: true, Multiple: true, MaxSelect: 2}},
	})
}

func TestRelationNormalize(t *testing.T) {
	single := Field{Options: Options{Collection: "col_x"}}
	multi := Field{Options: Options{Collection: "col_x", Multiple: true}}
	capped := Field{Options: Options{Collection: "col_x", Multiple: true, MaxSelect: 2}}
	runNormalize(t, FieldRelation, []normCase{
		{name: "single nil", f: single, in: nil, want: nil},
		{name: "single empty", f: single, in: "", want: nil},
		{name: "single id", f: single, in: id1, want: id1},
		{name: "single upper", f: single, in: "ABCDEFGHIJ12345", msg: "must be a record id"},
		{name: "single short", f: single, in: "abc", msg: "must be a record id"},
		{name: "single long", f: single, in: id1 + "x", msg: "must be a record id"},
		{name: "single number", f: single, in: num("1"), msg: "must be a record id"},
		{name: "single array", f: single, in: []any{id1}, msg: "must be a record id"},
		{name: "multi nil", f: multi, in: nil, want: nil},
		{name: "multi empty", f: multi, in: []any{}, want: `[]`},
		{name: "multi string", f: multi, in: id1, want: `["` + id1 + `"]`},
		{name: "multi", f: multi, in: []any{id2, id1}, want: `["` + id2 + `","` + id1 + `"]`},
		{name: "multi dedupe", f: multi, in: []any{id1, id1, id2}, want: `["` + id1 + `","` + id2 + `"]`},
		{name: "multi bad id", f: multi, in: []any{id1, "bad"}, msg: `"bad" is not a record id`},
		{name: "multi non-string", f: multi, in: []any{id1, true}, msg: "must be an array of record ids"},
		{name: "multi object", f: multi, in: map[string]any{}, msg: "must be an array of record ids"},
		{name: "cap ok", f: capped, in: []any{id1, id2, id1}, want: `["` + id1 + `","` + id2 + `"]`},
		{name: "over cap", f: capped, in: []any{id1, id2, id3}, msg: "must have at most 2 records"},
	})
}

func TestRelationAppendJSON(t *testing.T) {
	single := Field{Options: Options{Collection: "col_x"}}
	multi := Field{Options: Options{Collection: "col_x", Multiple: true}}
	runAppend(t, FieldRelation, []outCase{
		{name: "single nil", f: single, stored: nil, want: `null`},
		{name: "single", f: single, stored: id1, want: `"` + id1 + `"`},
		{name: "multi nil", f: multi, stored: nil, want: `[]`},
		{name: "multi", f: multi, stored: `["` + id1 + `"]`, want: `["` + id1 + `"]`},
		{name: "multi from single", f: multi, stored: id1, want: `["` + id1 + `"]`},
	})
	runZero(t, FieldRelation, []zeroCase{
		{name: "single nil", f: single, stored: nil, want: true},
		{name: "single set", f: single, stored: id1, want: false},
		{name: "multi empty", f: multi, stored: "[]", want: true},
		{name: "multi set", f: multi, stored: `["` + id1 + `"]`, want: false},
	})
}
