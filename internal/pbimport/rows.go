package pbimport

import (
	"fmt"

	"svcd/internal/pbschema"
)

// ImportRow is one record as POST /api/v1/admin/import-rows takes it.
type ImportRow struct {
	ID           string         `json:"id"`
	Created      int64          `json:"created"`
	Updated      int64          `json:"updated"`
	Values       map[string]any `json:"values"`
	PasswordHash string         `json:"password_hash,omitempty"`
}

// Converted is a PocketBase record made ready for svcd: its row, and the
// files of its file fields (by svcd field name) to upload once it exists.
type Converted struct {
	Row   ImportRow
	Files map[string][]string
}

// authFields are PocketBase's auth system fields and what svcd makes of
// them ("" drops the value).
var authFields = map[string]string{"email": "email", "verified": "email_verified", "emailVisibility": "", "tokenKey": "", "password": ""}

// Convert makes a record of c ready for svcd: field names are kept
// (rename maps the ones the schema translation renamed), dates stay
// PocketBase's text (svcd's date fields read it), the created and updated
// autodates become the record's times, an auth record's bcrypt hash is
// kept, and file fields are left for upload. skip names fields the
// translation dropped.
func Convert(c *Collection, r Record, rename map[string]string, skip map[string]bool) (Converted, error) {
	out := Converted{Row: ImportRow{ID: r.ID(), Values: map[string]any{}}, Files: map[string][]string{}}
	for _, f := range c.Fields {
		v := r[f.Name]
		name := f.Name
		if to, ok := rename[name]; ok {
			name = to
		}
		switch {
		case f.Name == "id":
			continue
		case c.Type == "auth" && f.Type == "password" && f.Name == "password":
			out.Row.PasswordHash, _ = v.(string)
			continue
		case c.Type == "auth" && hasKey(authFields, f.Name):
			if to := authFields[f.Name]; to != "" {
				out.Row.Values[to] = v
			}
			continue
		case f.Type == "autodate" && (f.Name == "created" || f.Name == "updated"):
			s, _ := v.(string)
			if s == "" {
				continue // no date
			}
			t, err := pbschema.ParseDate(s)
			if err != nil {
				return out, fmt.Errorf("record %s: %s: %w", r.ID(), f.Name, err)
			}
			if f.Name == "created" {
				out.Row.Created = t.Unix()
			} else {
				out.Row.Updated = t.Unix()
			}
			continue
		case skip[f.Name] || f.Type == "autodate":
			continue
		case f.Type == "file":
			switch x := v.(type) {
			case string:
				if x != "" {
					out.Files[name] = []string{x}
				}
			case []string:
				if len(x) > 0 {
					out.Files[name] = x
				}
			}
			continue
		}
		if s, ok := v.(string); ok && s == "" {
			continue // PocketBase's blank: svcd's is null
		}
		out.Row.Values[name] = v
	}
	if out.Row.Updated != 0 && out.Row.Created == 0 {
		out.Row.Created = out.Row.Updated
	}
	if out.Row.Updated < out.Row.Created {
		out.Row.Updated = out.Row.Created
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
