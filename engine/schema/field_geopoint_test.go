package schema

import "testing"

func TestGeoPointNormalize(t *testing.T) {
	runNormalize(t, FieldGeoPoint, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "point", in: map[string]any{"lon": num("12.5"), "lat": num("-45")}, want: `{"lon":12.5,"lat":-45}`},
		{name: "float64", in: map[string]any{"lat": 1.25, "lon": 2.0}, want: `{"lon":2,"lat":1.25}`},
		{name: "go map", in: map[string]float64{"lon": 1, "lat": 2}, want: `{"lon":1,"lat":2}`},
		{name: "edges", in: map[string]any{"lon": num("-180"), "lat": num("90")}, want: `{"lon":-180,"lat":90}`},
		{name: "zero", in: map[string]any{"lon": num("0"), "lat": num("0")}, want: `{"lon":0,"lat":0}`},
		{name: "lon range", in: map[string]any{"lon": num("180.1"), "lat": num("0")}, msg: "lon must be between -180 and 180"},
		{name: "lat range", in: map[string]any{"lon": num("0"), "lat": num("-90.5")}, msg: "lat must be between -90 and 90"},
		{name: "lon overflow", in: map[string]any{"lon": num("1e400"), "lat": num("0")}, msg: "lon must be between"},
		{name: "missing lat", in: map[string]any{"lon": num("1")}, msg: "lon and lat must be numbers"},
		{name: "string coord", in: map[string]any{"lon": "1", "lat": num("1")}, msg: "lon and lat must be numbers"},
		{name: "null coord", in: map[string]any{"lon": nil, "lat": num("1")}, msg: "lon and lat must be numbers"},
		{name: "extra key", in: map[string]any{"lon": num("1"), "lat": num("1"), "alt": num("3")}, msg: "no other keys"},
		{name: "empty object", in: map[string]any{}, msg: "lon and lat must be numbers"},
		{name: "string", in: "1,2", msg: "must be an object {lon, lat}"},
		{name: "array", in: []any{num("1"), num("2")}, msg: "must be an object {lon, lat}"},
	})
}

func TestGeoPointCleanOptions(t *testing.T) {
	runClean(t, FieldGeoPoint, []optCase{
		{name: "all dropped", opts: allOptions(), want: Options{}},
	})
}

func TestGeoPointAppendJSON(t *testing.T) {
	runAppend(t, FieldGeoPoint, []outCase{
		{name: "nil", stored: nil, want: `null`},
		{name: "point", stored: `{"lon":1,"lat":2}`, want: `{"lon":1,"lat":2}`},
		{name: "reordered", stored: `{"lat":2.5,"lon":-1}`, want: `{"lon":-1,"lat":2.5}`},
		{name: "bytes", stored: []byte(`{"lon":0,"lat":0}`), want: `{"lon":0,"lat":0}`},
		{name: "missing key", stored: `{"lon":1}`, want: `null`},
		{name: "garbage", stored: `x`, want: `null`},
		{name: "empty", stored: ``, want: `null`},
		{name: "number", stored: int64(1), want: `null`},
	})
}

func TestGeoPointIsZero(t *testing.T) {
	runZero(t, FieldGeoPoint, []zeroCase{
		{name: "nil", stored: nil, want: true},
		{name: "origin", stored: `{"lon":0,"lat":0}`, want: true},
		{name: "point", stored: `{"lon":0,"lat":1}`, want: false},
		{name: "garbage", stored: "x", want: true},
	})
}
