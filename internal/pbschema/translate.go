package pbschema

import (
	"fmt"
	"strings"
	"time"
)

// DateLayout is PocketBase's date string layout (types.DefaultDateLayout).
const DateLayout = "2006-01-02 15:04:05.000Z"

// ParseDate reads a PocketBase date string (with or without its
// milliseconds), RFC 3339 or a bare day, keeping the milliseconds; the
// caller takes t.Unix() where svcd stores seconds.
func ParseDate(s string) (time.Time, error) {
	for _, layout := range []string{DateLayout, "2006-01-02 15:04:05Z07:00", time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date: %q", s)
}

// FormatDate writes unix seconds as a PocketBase date string.
func FormatDate(unix int64) string { return time.Unix(unix, 0).UTC().Format(DateLayout) }

// Translated is the svcd side of one PocketBase collection.
type Translated struct {
	Collection
	// Renamed is true when the name changed (PocketBase's name is
	// kept in Original).
	Renamed  bool
	Original string
	// FieldNames maps each PocketBase field name to its svcd name (the
	// system fields included: verified -> email_verified).
	FieldNames map[string]string
}

// Translate translates a PocketBase collection into svcd's definition.
// lk resolves relation targets and renamed collections (nil keeps
// names). Problems list every loss; an error means nothing usable could
// be made (a PocketBase system collection, an unknown type).
func Translate(pb PBCollection, lk Lookup) (Translated, []Problem, error) {
	var problems []Problem
	add := func(where, original, msg string) {
		problems = append(problems, Problem{Where: where, Original: original, Message: msg})
	}
	if containsFold(pbSystemCollections, pb.Name) {
		return Translated{}, nil, fmt.Errorf("%s is a PocketBase system collection", pb.Name)
	}
	switch pb.Type {
	case "base", "auth", "view":
	case "":
		pb.Type = "base"
	default:
		return Translated{}, nil, fmt.Errorf("unknown collection type %q", pb.Type)
	}
	auth := pb.Type == "auth"
	name, renamed := CollectionName(pb.Name)
	if renamed {
		add("name", pb.Name, fmt.Sprintf("the name is reserved or invalid in svcd; the collection is %s", name))
	}
	out := Translated{
		Collection: Collection{Name: name, Type: pb.Type, Fields: []Field{}},
		Renamed:    renamed, Original: pb.Name,
		FieldNames: map[string]string{"id": "id"},
	}
	if pb.Type == "view" {
		out.ViewQuery = pb.ViewQuery
		add("viewQuery", pb.ViewQuery, "kept as view_query; svcd checks it when the collection is saved (PocketBase's and svcd's view rules on SQL differ)")
	}
	for _, f := range pb.Fields {
		sf, ps := translateField(f, auth, lk)
		problems = append(problems, ps...)
		if sf == nil {
			continue
		}
		out.FieldNames[f.Name] = sf.Name()
		if len(f.Thumbs) > 0 {
			if out.Thumbs == nil {
				out.Thumbs = map[string][]string{}
			}
			out.Thumbs[sf.Name()] = f.Thumbs
		}
		if pb.Type == "view" {
			continue // a view's fields come from its query
		}
		out.Fields = append(out.Fields, sf)
	}
	if auth {
		if _, ok := out.FieldNames["emailVisibility"]; !ok {
			// PocketBase's system field is a plain field in svcd, which
			// the compat layer reads to show or hide email.
			out.Fields = append(out.Fields, Field{"name": "emailVisibility", "type": "bool", "required": false, "hidden": false})
			out.FieldNames["emailVisibility"] = "emailVisibility"
		}
		for pbn, sn := range map[string]string{"email": "email", "password": "password", "verified": "email_verified"} {
			out.FieldNames[pbn] = sn
		}
	}
	out.FieldNames["created"], out.FieldNames["updated"] = "created", "updated"

	// Rules.
	rc := func(where string) RuleContext { return RuleContext{Where: where, Auth: auth, Lookup: lk} }
	rewrite := func(where string, r *string) *string {
		if r == nil {
			return nil
		}
		s, ps, err := RewriteRule(*r, rc(where))
		problems = append(problems, ps...)
		if err != nil {
			add(where, *r, err.Error()+"; the rule is null (superusers only)")
			return nil
		}
		return &s
	}
	list := rewrite("listRule", pb.ListRule)
	view := rewrite("viewRule", pb.ViewRule)
	if (pb.ListRule != nil && list == nil) || (pb.ViewRule != nil && view == nil) {
		list, view = nil, nil
	}
	vr, ps := ViewRule(list, view)
	problems = append(problems, ps...)
	out.ViewRule = vr
	out.CreateRule = rewrite("createRule", pb.CreateRule)
	out.UpdateRule = rewrite("updateRule", pb.UpdateRule)
	out.DeleteRule = rewrite("deleteRule", pb.DeleteRule)

	// Indexes: single-field unique ones become the field's unique flag
	// (a create carries them); plain ones stay in Indexes for the caller.
	idx, ps := translateIndexes(pb.Indexes, out.FieldNames, auth)
	problems = append(problems, ps...)
	for _, ix := range idx {
		if !ix.Unique {
			out.Indexes = append(out.Indexes, ix)
			continue
		}
		for _, f := range out.Fields {
			if f.Name() == ix.Field {
				f["unique"] = true
			}
		}
	}

	if auth {
		out.AuthOptions, ps = translateAuth(pb)
		problems = append(problems, ps...)
	}
	return out, problems, nil
}

// translateAuth maps PocketBase's auth options onto svcd's switches and
// reports the rest.
func translateAuth(pb PBCollection) (*AuthOptions, []Problem) {
	var problems []Problem
	o := &AuthOptions{Password: true}
	if pb.PasswordAuth != nil {
		o.Password = pb.PasswordAuth.Enabled
		for _, f := range pb.PasswordAuth.IdentityFields {
			if f != "email" {
				problems = append(problems, Problem{Where: "passwordAuth.identityFields", Original: f, Message: "svcd signs in by email only"})
			}
		}
	}
	if pb.OTP != nil {
		o.OTP = pb.OTP.Enabled
		if pb.OTP.Enabled && (pb.OTP.Length != 0 && pb.OTP.Length != 6 || pb.OTP.Duration != 0 && pb.OTP.Duration != 600) {
			problems = append(problems, Problem{Where: "otp", Message: fmt.Sprintf("svcd's codes have 6 digits and last 10 minutes (PocketBase: length %d, duration %ds); the global auth.otp.enabled setting must be on too", pb.OTP.Length, pb.OTP.Duration)})
		}
	}
	if pb.MFA != nil && pb.MFA.Enabled {
		problems = append(problems, Problem{Where: "mfa", Message: "PocketBase's MFA (two auth methods) is not svcd's (TOTP); not enabled", Security: true})
	}
	if pb.OAuth2 != nil {
		o.OAuth2 = pb.OAuth2.Enabled
		for _, p := range pb.OAuth2.Providers {
			problems = append(problems, Problem{Where: "oauth2.providers", Original: fmt.Sprint(p["name"]), Message: "svcd's OAuth2 providers are global settings: enter this provider's client id and secret there"})
		}
	}
	if pb.AuthRule != nil && *pb.AuthRule != "" {
		problems = append(problems, Problem{Where: "authRule", Original: *pb.AuthRule, Message: "svcd has no auth rule: every user with a valid password can sign in", Security: true})
	}
	if pb.ManageRule != nil {
		problems = append(problems, Problem{Where: "manageRule", Original: *pb.ManageRule, Message: "svcd has no manage rule: only superusers manage other users' email and password", Security: true})
	}
	problems = append(problems, Problem{Where: "tokenKey", Message: "tokens issued by PocketBase stop working: users sign in again"})
	return o, problems
}

// translateField translates one field; nil means the field has no svcd
// counterpart of its own (id, created/updated, auth system fields).
func translateField(f PBField, auth bool, lk Lookup) (Field, []Problem) {
	var problems []Problem
	where := "fields." + f.Name
	add := func(member, original, msg string) {
		w := where
		if member != "" {
			w += "." + member
		}
		problems = append(problems, Problem{Where: w, Original: original, Message: msg})
	}
	switch {
	case f.Name == "id":
		if (f.Pattern != "" && f.Pattern != "^[a-z0-9]+$") || (f.Min != nil && num(f.Min) != 15) || (f.Max != nil && num(f.Max) != 15) {
			add("", fmt.Sprintf("pattern %s min %v max %v", f.Pattern, f.Min, f.Max), "svcd ids are 15 characters of [a-z0-9]; other ids are replaced on import")
		}
		return nil, problems
	case (f.Name == "created" || f.Name == "updated") && f.Type == "autodate":
		return nil, nil // svcd's built-in created and updated
	case auth && (f.Name == "email" || f.Name == "password" || f.Name == "verified") && f.Type != "" && (f.System || f.Type == "email" || f.Type == "password" || f.Type == "bool"):
		if f.Name == "email" && (len(f.OnlyDomains) > 0 || len(f.ExceptDomains) > 0) {
			add("", "", "the domain lists of the auth email are not enforced by svcd")
		}
		return nil, problems
	case auth && f.Name == "tokenKey":
		return nil, nil // reported once by translateAuth
	}
	name, renamed := fieldName(f.Name, auth)
	if renamed {
		add("name", f.Name, "reserved or invalid in svcd; the field is "+name)
	}
	out := Field{"name": name, "type": f.Type, "required": f.Required, "hidden": f.Hidden}
	setBounds := func() {
		if f.Min != nil && num(f.Min) != 0 {
			out["min"] = num(f.Min)
		}
		if f.Max != nil && num(f.Max) != 0 {
			out["max"] = num(f.Max)
		}
	}
	domains := func() {
		if len(f.OnlyDomains) > 0 {
			out["domains_only"] = f.OnlyDomains
		}
		if len(f.ExceptDomains) > 0 {
			out["domains_except"] = f.ExceptDomains
		}
	}
	switch f.Type {
	case "text":
		setBounds()
		if f.Pattern != "" {
			out["pattern"] = f.Pattern
		}
		if f.AutogeneratePattern != "" {
			add("autogeneratePattern", f.AutogeneratePattern, "svcd does not generate text values; lost")
		}
		if f.PrimaryKey {
			add("primaryKey", "", "only id is a primary key in svcd")
		}
	case "number":
		if f.Min != nil {
			out["min"] = num(f.Min)
		}
		if f.Max != nil {
			out["max"] = num(f.Max)
		}
		if f.OnlyInt {
			out["integer"] = true
		}
	case "bool", "geoPoint":
	case "email", "url":
		domains()
	case "editor":
		if f.MaxSize > 0 {
			out["max"] = float64(f.MaxSize)
			add("maxSize", fmt.Sprint(f.MaxSize), "svcd's editor max counts characters, PocketBase's maxSize bytes")
		}
		if f.ConvertURLs {
			add("convertURLs", "true", "not supported; lost")
		}
	case "date":
		for _, b := range []struct {
			key string
			v   any
		}{{"min", f.Min}, {"max", f.Max}} {
			s, _ := b.v.(string)
			if s == "" {
				continue
			}
			t, err := ParseDate(s)
			if err != nil {
				add(b.key, s, "not a date; lost")
				continue
			}
			out[b.key] = float64(t.Unix())
		}
	case "autodate":
		out["on_create"], out["on_update"] = f.OnCreate, f.OnUpdate
	case "select":
		out["values"] = nonNil(f.Values)
		if f.MaxSelect > 1 {
			out["multiple"], out["max_select"] = true, f.MaxSelect
		}
	case "file":
		if f.MaxSelect > 1 {
			out["multiple"] = true
		}
		if f.MaxSize > 0 {
			out["maxSize"] = f.MaxSize
		}
		if len(f.MimeTypes) > 0 {
			out["mimeTypes"] = f.MimeTypes
		}
		if f.Protected {
			out["protected"] = true
		}
		if f.MaxSelect > 1 {
			add("maxSelect", fmt.Sprint(f.MaxSelect), "svcd's multiple file fields have no count limit")
		}
	case "relation":
		target := f.CollectionID
		if lk != nil {
			if n, ok := lk.SvcdName(target); ok {
				target = n
			} else {
				add("collectionId", f.CollectionID, "unknown target collection; kept as is")
			}
		}
		out["collection"] = target
		if f.CascadeDelete {
			out["cascade"] = true
		}
		if f.MaxSelect > 1 {
			out["multiple"], out["max_select"] = true, f.MaxSelect
		}
		if f.MinSelect > 1 || f.MinSelect == 1 && !f.Required {
			add("minSelect", fmt.Sprint(f.MinSelect), "svcd has no minimum count (required means at least one); lost")
		}
	case "json":
		if f.MaxSize > 0 {
			out["max_size"] = f.MaxSize
		}
	case "password":
		setBounds()
		if f.Pattern != "" || f.Cost != 0 {
			add("", "", "pattern and cost of a password field are not supported; lost")
		}
	default:
		add("type", f.Type, "unknown field type; the field is left out")
		return nil, problems
	}
	return out, problems
}

// num reads a JSON number (float64 or int from Go callers).
func num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
