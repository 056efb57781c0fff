package schema

import (
	"math"
	"testing"
)

func TestDateNormalize(t *testing.T) {
	bounded := Field{Options: Options{Min: ptr(1700000000), Max: ptr(1800000000)}}
	runNormalize(t, FieldDate, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "empty", in: "", want: nil},
		{name: "json seconds", in: num("1700000000"), want: int64(1700000000)},
		{name: "json zero", in: num("0"), want: int64(0)},
		{name: "json negative", in: num("-100"), want: int64(-100)},
		{name: "json exp", in: num("1.7e9"), want: int64(1700000000)},
		{name: "json fraction", in: num("1.5"), msg: "must be unix seconds or an ISO 8601 date"},
		{name: "float whole", in: 1700000000.0, want: int64(1700000000)},
		{name: "float fraction", in: 1.5, msg: "must be unix seconds"},
		{name: "int", in: 1700000000, want: int64(1700000000)},
		{name: "int64", in: int64(5), want: int64(5)},
		{name: "digit string", in: "1700000000", want: int64(1700000000)},
		{name: "negative digit string", in: "-100", want: int64(-100)},
		{name: "rfc3339", in: "2023-11-14T22:13:20Z", want: int64(1700000000)},
		{name: "rfc3339 offset", in: "2023-11-14T23:13:20+01:00", want: int64(1700000000)},
		{name: "rfc3339 fraction", in: "2023-11-14T22:13:20.987Z", want: int64(1700000000)},
		{name: "lowercase", in: "2023-11-14t22:13:20z", want: int64(1700000000)},
		{name: "space zone", in: "2023-11-14 22:13:20.000Z", want: int64(1700000000)},
		{name: "space utc", in: "2023-11-14 22:13:20", want: int64(1700000000)},
		{name: "T utc", in: "2023-11-14T22:13:20", want: int64(1700000000)},
		{name: "minutes", in: "2023-11-14T22:13", want: int64(1699999980)},
		{name: "date only", in: "2023-11-14", want: int64(1699920000)},
		{name: "before epoch", in: "1969-12-31T23:58:20Z", want: int64(-100)},
		{name: "trimmed", in: " 2023-11-14 ", want: int64(1699920000)},
		{name: "word", in: "yesterday", msg: "must be unix seconds or an ISO 8601 date"},
		{name: "bad month", in: "2023-13-01", msg: "must be unix seconds"},
		{name: "year 10000", in: "10000-01-01", msg: "must be unix seconds"},
		{name: "too large", in: num("99999999999999"), msg: "between years 1 and 9999"},
		{name: "too large float", in: 1e300, msg: "must be unix seconds"},
		{name: "too large string", in: "99999999999999", msg: "must be unix seconds"},
		{name: "nan", in: math.NaN(), msg: "must be unix seconds"},
		{name: "bool", in: true, msg: "must be unix seconds"},
		{name: "array", in: []any{}, msg: "must be unix seconds"},
		{name: "min", f: bounded, in: num("1699999999"), msg: "must not be before 2023-11-14T22:13:20Z"},
		{name: "min edge", f: bounded, in: "2023-11-14T22:13:20Z", want: int64(1700000000)},
		{name: "max", f: bounded, in: num("1800000001"), msg: "must not be after"},
	})
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "2000-01-01": 946684800, "2000-01-01T00:00:00+00:00": 946684800,
		"0001-01-01": minUnix, "9999-12-31T23:59:59Z": maxUnix,
	} {
		if got, ok := ParseDate(in); !ok || got != want {
			t.Errorf("ParseDate(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "2000-01-01X", "1.5", "--1", "2000/01/01"} {
		if got, ok := ParseDate(in); ok {
			t.Errorf("ParseDate(%q) = %d, want failure", in, got)
		}
	}
}

func TestDateCleanOptions(t *testing.T) {
	runClean(t, FieldDate, []optCase{
		{name: "none", want: Options{}},
		{name: "bounds", opts: Options{Min: ptr(0), Max: ptr(100)}, want: Options{Min: ptr(0), Max: ptr(100)}},
		{name: "fraction", opts: Options{Min: ptr(1.5)}, msg: "min must be a whole number"},
		{name: "min over max", opts: Options{Min: ptr(10), Max: ptr(5)}, msg: "min cannot be greater than max"},
		{name: "others dropped", opts: allOptions(), want: Options{Min: ptr(1), Max: ptr(5)}},
	})
}

func TestDateAppendJSON(t *testing.T) {
	for _, typ := range []string{FieldDate, FieldAutodate} {
		t.Run(typ, func(t *testing.T) {
			runAppend(t, typ, []outCase{
				{name: "nil", stored: nil, want: `null`},
				{name: "int", stored: int64(1700000000), want: `1700000000`},
				{name: "negative", stored: int64(-5), want: `-5`},
				{name: "float", stored: 1700000000.0, want: `1700000000`},
				{name: "iso text", stored: "2023-11-14", want: `1699920000`},
				{name: "digit bytes", stored: []byte("42"), want: `42`},
				{name: "fraction text", stored: "12.5", want: `12`},
				{name: "garbage", stored: "x", want: `null`},
				{name: "nan", stored: math.NaN(), want: `null`},
				{name: "huge", stored: 1e300, want: `null`},
			})
		})
	}
}

func TestDateIsZero(t *testing.T) {
	runZero(t, FieldDate, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "epoch is a date", stored: int64(0), want: false},
		{name: "value", stored: int64(5), want: false},
	})
}

func TestAutodate(t *testing.T) {
	runClean(t, FieldAutodate, []optCase{
		{name: "neither", msg: "on_create or on_update must be true"},
		{name: "create", opts: Options{OnCreate: true}, want: Options{OnCreate: true}},
		{name: "update", opts: Options{OnUpdate: true}, want: Options{OnUpdate: true}},
		{name: "others dropped", opts: allOptions(), want: Options{OnCreate: true, OnUpdate: true}},
	})
	runNormalize(t, FieldAutodate, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "number ignored", in: num("5"), want: nil},
		{name: "text ignored", in: "2023-11-14", want: nil},
		{name: "garbage ignored", in: []any{true}, want: nil},
	})
	runZero(t, FieldAutodate, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "set", stored: int64(1), want: false},
	})
}
