package pbcompat

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"svcd/engine"
	"svcd/engine/schema"
)

// DateLayout is PocketBase's date string (pb:tools/types/datetime.go
// DefaultDateLayout). svcd keeps seconds, so the milliseconds are .000.
const DateLayout = "2006-01-02 15:04:05.000Z"

// FormatDate turns unix seconds into PocketBase's date string.
func FormatDate(unix int64) string {
	return time.Unix(unix, 0).UTC().Format(DateLayout)
}

// decodeObject decodes a JSON object keeping numbers exact.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// RecordOut turns svcd's record JSON (raw, a record of c as the engine
// answers it, expand included) into PocketBase's record for viewer:
// dates as strings, blank values as PocketBase's zero values instead of
// null, email_verified as verified, emailVisibility, and the email left
// out for viewers PocketBase would not show it to. Members the record
// does not carry (a fields projection) stay out. cat resolves the
// collections of expanded relations (nil: expand is shaped as is).
func RecordOut(cat Catalog, c *schema.Collection, raw []byte, viewer engine.Principal) (map[string]any, error) {
	m, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	shapeRecord(cat, c, m, viewer, 0)
	return m, nil
}

// maxExpandDepth bounds the recursion into expand (svcd's expand is at
// most 6 levels deep).
const maxExpandDepth = 8

func shapeRecord(cat Catalog, c *schema.Collection, m map[string]any, viewer engine.Principal, depth int) {
	for _, k := range []string{"created", "updated"} {
		if v, ok := m[k]; ok {
			m[k] = dateOut(v)
		}
	}
	if c != nil {
		for _, f := range c.Fields {
			v, ok := m[f.Name]
			if !ok {
				continue
			}
			m[f.Name] = valueOut(f, v)
		}
		if c.Type == schema.TypeAuth {
			shapeAuth(c, m, viewer)
		}
	}
	ex, ok := m["expand"].(map[string]any)
	if !ok || depth >= maxExpandDepth {
		return
	}
	for name, v := range ex {
		target := relationTarget(cat, c, name)
		switch x := v.(type) {
		case map[string]any:
			shapeRecord(cat, target, x, viewer, depth+1)
		case []any:
			for _, item := range x {
				if im, ok := item.(map[string]any); ok {
					shapeRecord(cat, target, im, viewer, depth+1)
				}
			}
		}
	}
}

// relationTarget is the collection an expand key points into: the target
// of c's relation field, or, for a back-relation (<coll>_via_<field>),
// <coll>. nil when unknown.
func relationTarget(cat Catalog, c *schema.Collection, key string) *schema.Collection {
	if cat == nil || c == nil {
		return nil
	}
	name := ""
	for _, f := range c.Fields {
		if f.Name == key && f.Type == schema.FieldRelation {
			name = f.Collection
		}
	}
	if name == "" {
		if i := bytes.Index([]byte(key), []byte("_via_")); i > 0 {
			name = key[:i]
		}
	}
	if name == "" {
		return nil
	}
	t, err := cat.Collection(name)
	if err != nil {
		return nil
	}
	return t
}

// shapeAuth applies PocketBase's auth record members: verified,
// emailVisibility, and email only for the owner, superusers, or when the
// record makes it visible.
func shapeAuth(c *schema.Collection, m map[string]any, viewer engine.Principal) {
	if v, ok := m["email_verified"]; ok {
		m["verified"] = v == true
		delete(m, "email_verified")
	}
	delete(m, "is_anonymous")
	visible, _ := m["emailVisibility"].(bool)
	if _, ok := m["emailVisibility"]; !ok {
		m["emailVisibility"] = false
	}
	owner := viewer.Kind == engine.User && viewer.ID == m["id"] && (viewer.Collection == c.Name || viewer.Collection == c.ID)
	if !visible && !owner && !viewer.IsAdmin() {
		delete(m, "email")
	}
}

// dateOut turns a unix-seconds value into PocketBase's date string ("" for
// null); other values are left alone.
func dateOut(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return FormatDate(n)
		}
		if f, err := x.Float64(); err == nil {
			return FormatDate(int64(f))
		}
	case float64:
		return FormatDate(int64(x))
	}
	return v
}

// valueOut is a field's value as PocketBase answers it: never null
// (except json), dates as strings.
func valueOut(f *schema.Field, v any) any {
	switch f.Type {
	case schema.FieldDate, schema.FieldAutodate:
		return dateOut(v)
	}
	if v != nil {
		return v
	}
	switch f.Type {
	case schema.FieldNumber:
		return 0
	case schema.FieldBool:
		return false
	case schema.FieldJSON, schema.FieldVector:
		return nil
	case schema.FieldGeoPoint:
		return map[string]any{"lon": 0, "lat": 0}
	case schema.FieldSelect, schema.FieldRelation, schema.FieldFile:
		if f.Multiple {
			return []any{}
		}
	}
	return ""
}
