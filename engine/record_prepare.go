package engine

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"svcd/engine/password"
	"svcd/engine/schema"
)

// prepareCreate validates a create body against ci and returns the record id
// and the stored value of every field, with passwords hashed and autodates
// filled: everything the handler needs, nothing it must compute.
func (rs *Records) prepareCreate(ci *Coll, body map[string]any, admin bool, now int64) (string, []any, *Error) {
	return rs.prepareCreateWith(ci, body, nil, admin, now)
}

// prepareCreateWith is prepareCreate with the stored values of file fields
// a module fills (files, the names of a multipart create's uploads, by
// field name). A body never sets a file field, so a required one is
// decided here, on the names the create will store: none is "cannot be
// blank", as for any other required field. The command names the
// collection's version, and the apply refuses a moved schema
// (ErrSchemaMoved), so every replica holds the create to the same
// `required`.
func (rs *Records) prepareCreateWith(ci *Coll, body, files map[string]any, admin bool, now int64) (string, []any, *Error) {
	var d map[string]string // the field errors, made at the first
	fail := func(field, msg string) {
		if d == nil {
			d = map[string]string{}
		}
		d[field] = msg
	}
	id := ""
	switch v := body["id"].(type) {
	case nil:
		id = rs.ids.next()
	case string:
		if !ValidRecordID(v) {
			fail("id", "must be 15 characters of a-z and 0-9")
		}
		id = v
	default:
		fail("id", "must be a string")
	}
	values := make([]any, len(ci.fields))
	for i, f := range ci.fields {
		in := body[f.Name]
		if f.system {
			in = systemFieldInput(f, in, admin, true)
		}
		if f.Type == schema.FieldAutodate {
			if f.OnCreate || f.OnUpdate {
				values[i] = now
			}
			continue
		}
		if v, ok := files[f.Name]; ok && f.system && f.Name == "password" {
			// A hash a module imports as stored (engine/pbimport).
			values[i] = v
			continue
		}
		stored, msg := rs.normalize(f, in)
		if msg == "" && f.system && f.Name == "password" && stored == nil {
			msg = "cannot be blank"
		}
		if msg == "" && f.Type == schema.FieldFile {
			if v, ok := files[f.Name]; ok {
				stored = v
			}
			msg = fileRequiredMsg(f, stored)
		}
		if msg != "" {
			fail(f.Name, msg)
			continue
		}
		values[i] = stored
	}
	if len(d) > 0 {
		return "", nil, ValidationError(d)
	}
	return id, values, nil
}

// fileRequiredMsg is the required check of file field f holding stored
// (its names): "cannot be blank" when f is required and holds none.
// schema.NormalizeValue leaves file fields out, since their names come
// from uploads, not from the value it is given.
func fileRequiredMsg(f *FieldInfo, stored any) string {
	if f.Required && f.typ.IsZero(f.Field, stored) {
		return "cannot be blank"
	}
	return ""
}

// PrepareUpdate validates the fields present in a patch body of a record
// of ci, as a record update does: the stored values to set.
func (rs *Records) PrepareUpdate(ci *Coll, body map[string]any, admin bool, now int64) (map[string]any, *Error) {
	d := map[string]string{}
	values := map[string]any{}
	for _, f := range ci.fields {
		if f.Type == schema.FieldAutodate {
			if f.OnUpdate {
				values[f.Name] = now
			}
			continue
		}
		in, present := body[f.Name]
		if !present {
			continue
		}
		if f.system {
			if !systemFieldWritable(f, admin) {
				continue
			}
		}
		stored, msg := rs.normalize(f, in)
		if msg == "" && f.system && f.Name == "password" && stored == nil {
			msg = "cannot be blank"
		}
		if msg == "" && f.Type == schema.FieldFile {
			// null removes the field's files: refused when it is required.
			msg = fileRequiredMsg(f, stored)
		}
		if msg != "" {
			d[f.Name] = msg
			continue
		}
		values[f.Name] = stored
	}
	if len(d) > 0 {
		return nil, ValidationError(d)
	}
	return values, nil
}

// systemFieldInput decides what a client may set on an auth system field.
func systemFieldInput(f *FieldInfo, in any, admin, create bool) any {
	if systemFieldWritable(f, admin) {
		return in
	}
	if f.Type == schema.FieldBool {
		return false
	}
	return nil
}

func systemFieldWritable(f *FieldInfo, admin bool) bool {
	switch f.Name {
	case "email", "password":
		return true
	case "email_verified":
		return admin
	}
	return false
}

// normalize validates one value and hashes passwords.
func (rs *Records) normalize(f *FieldInfo, in any) (any, string) {
	stored, msg := schema.NormalizeValue(f.Field, in)
	if msg == "" && stored != nil && f.Encrypted {
		return rs.e.seal(stored)
	}
	if msg != "" || stored == nil || f.Type != schema.FieldPassword {
		return stored, msg
	}
	plain, _ := stored.(string)
	if f.system {
		if msg := rs.CheckPasswordPolicy(plain); msg != "" {
			return nil, msg
		}
	}
	h, err := password.Hash(plain, rs.e.pwParams)
	if err != nil {
		return nil, "could not be stored"
	}
	return h, ""
}

// CheckPasswordPolicy applies the password.* settings to an account
// password: "" when it passes, else why not.
func (rs *Records) CheckPasswordPolicy(p string) string {
	minLen, _ := strconv.Atoi(rs.e.Setting("password.min_length"))
	minLen = max(minLen, 8)
	if n := len([]rune(p)); n < minLen {
		return fmt.Sprintf("must be at least %d characters", minLen)
	}
	if len([]rune(p)) > 1024 {
		return "must be at most 1024 characters"
	}
	checks := []struct {
		key  string
		ok   func(rune) bool
		what string
	}{
		{"password.require_upper", unicode.IsUpper, "an upper-case letter"},
		{"password.require_lower", unicode.IsLower, "a lower-case letter"},
		{"password.require_digit", unicode.IsDigit, "a digit"},
		{"password.require_symbol", func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }, "a symbol"},
	}
	var missing []string
	for _, c := range checks {
		if rs.e.SettingBool(c.key) && strings.IndexFunc(p, c.ok) < 0 {
			missing = append(missing, c.what)
		}
	}
	if len(missing) > 0 {
		return "must contain " + strings.Join(missing, ", ")
	}
	if rs.e.SettingBool("password.hibp_check") && rs.breached(p) {
		return "appears in a known data breach; choose another"
	}
	return ""
}
