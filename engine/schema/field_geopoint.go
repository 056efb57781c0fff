package schema

import (
	"encoding/json"
	"strings"
)

var _ FieldType = geoPointType{}

// geoPointType is a position {lon, lat} in degrees, lon in [-180, 180] and
// lat in [-90, 90]; both keys are required and no other key is allowed.
// Stored as TEXT {"lon":<n>,"lat":<n>} and returned as that object. As in
// PocketBase, {0, 0} counts as blank for required.
type geoPointType struct{}

func (geoPointType) Name() string { return FieldGeoPoint }

func (geoPointType) Column(*Field) Column { return ColText }

func (geoPointType) OptionKeys() []string { return nil }

func (geoPointType) CleanOptions(f *Field, _ Lookup) string {
	f.Options = Options{}
	return ""
}

func (geoPointType) Normalize(_ *Field, in any) (any, string) {
	const shape = "must be an object {lon, lat}"
	var m map[string]any
	switch x := in.(type) {
	case nil:
		return nil, ""
	case map[string]any:
		m = x
	case map[string]float64:
		m = make(map[string]any, len(x))
		for k, v := range x {
			m[k] = v
		}
	default:
		return nil, shape
	}
	for _, k := range sortedKeys(m) {
		if k != "lon" && k != "lat" {
			return nil, shape + " with no other keys"
		}
	}
	lon, okLon := numberInput(m["lon"])
	lat, okLat := numberInput(m["lat"])
	if !okLon || !okLat {
		return nil, "lon and lat must be numbers"
	}
	if !finite(lon) || lon < -180 || lon > 180 {
		return nil, "lon must be between -180 and 180"
	}
	if !finite(lat) || lat < -90 || lat > 90 {
		return nil, "lat must be between -90 and 90"
	}
	return string(appendGeoPoint(nil, lon, lat)), ""
}

func (geoPointType) IsZero(_ *Field, stored any) bool {
	lon, lat, ok := storedGeoPoint(stored)
	return !ok || lon == 0 && lat == 0
}

func (geoPointType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	lon, lat, ok := storedGeoPoint(stored)
	if !ok {
		return append(buf, "null"...)
	}
	return appendGeoPoint(buf, lon, lat)
}

// appendGeoPoint appends {"lon":<lon>,"lat":<lat>}.
func appendGeoPoint(buf []byte, lon, lat float64) []byte {
	buf = append(buf, `{"lon":`...)
	buf = appendFloat(buf, lon)
	buf = append(buf, `,"lat":`...)
	buf = appendFloat(buf, lat)
	return append(buf, '}')
}

// storedGeoPoint reads a stored point; ok is false when it is not one.
func storedGeoPoint(stored any) (lon, lat float64, ok bool) {
	s, isText := storedString(stored)
	if !isText || strings.TrimSpace(s) == "" {
		return 0, 0, false
	}
	var p struct {
		Lon *float64 `json:"lon"`
		Lat *float64 `json:"lat"`
	}
	if json.Unmarshal([]byte(s), &p) != nil || p.Lon == nil || p.Lat == nil ||
		!finite(*p.Lon) || !finite(*p.Lat) {
		return 0, 0, false
	}
	return *p.Lon, *p.Lat, true
}
