package oauth2

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// object is a decoded JSON object of a provider's answer.
type object map[string]any

// decode reads a JSON object, numbers kept as written (ids of some
// providers are numbers too large for a float).
func decode(b []byte, what string) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var o object
	if err := dec.Decode(&o); err != nil || o == nil {
		return nil, invalid("the %s answer is not a JSON object", what)
	}
	return o, nil
}

// get follows path through nested objects; nil where it ends.
func (o object) get(path ...string) any {
	var cur any = map[string]any(o)
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			if om, ok2 := cur.(object); ok2 {
				m = om
			} else {
				return nil
			}
		}
		cur = m[k]
	}
	return cur
}

// str is the string (or number, as written) at path; "" otherwise.
func (o object) str(path ...string) string {
	switch v := o.get(path...).(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// flag is the boolean at path: true, or the string "true" (Apple writes
// its booleans as strings).
func (o object) flag(path ...string) bool {
	switch v := o.get(path...).(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true")
	}
	return false
}

// obj is the object at path (nil otherwise).
func (o object) obj(path ...string) object {
	m, _ := o.get(path...).(map[string]any)
	return object(m)
}

// list is the array at path, its objects only.
func (o object) list(path ...string) []object {
	a, _ := o.get(path...).([]any)
	out := make([]object, 0, len(a))
	for _, v := range a {
		if m, ok := v.(map[string]any); ok {
			out = append(out, object(m))
		}
	}
	return out
}

// fetch GETs url through s and decodes the object it answers.
func (s *Source) fetch(ctx context.Context, url, what string, header map[string]string) (object, error) {
	b, err := s.Get(ctx, url, header)
	if err != nil {
		return nil, err
	}
	return decode(b, what)
}

// fetchList GETs url through s and decodes the array of objects it
// answers.
func (s *Source) fetchList(ctx context.Context, url, what string, header map[string]string) ([]object, error) {
	b, err := s.Get(ctx, url, header)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var a []map[string]any
	if err := dec.Decode(&a); err != nil {
		return nil, invalid("the %s answer is not a JSON array", what)
	}
	out := make([]object, len(a))
	for i, m := range a {
		out[i] = object(m)
	}
	return out, nil
}

// claims decodes the verified ID token's claims.
func (s *Source) claims() (object, error) {
	if s.Claims == nil {
		return nil, invalid("the token answer carries no ID token")
	}
	return decode(s.Claims, "ID token")
}

// userInfo fetches the configured user-info endpoint.
func (s *Source) userInfo(ctx context.Context, header map[string]string) (object, error) {
	return s.fetch(ctx, s.Config.UserInfoURL, "user info", header)
}

// identity checks that the provider named its user.
func identity(id *Identity) (*Identity, error) {
	if id.ID == "" {
		return nil, invalid("the provider's answer names no user id")
	}
	if id.Email == "" {
		id.Verified = false
	}
	return id, nil
}

// withSubpath is base with "/"+sub appended to its path, before any query.
func withSubpath(base, sub string) string {
	path, query, hasQuery := strings.Cut(base, "?")
	out := strings.TrimSuffix(path, "/") + "/" + sub
	if hasQuery {
		out += "?" + query
	}
	return out
}
