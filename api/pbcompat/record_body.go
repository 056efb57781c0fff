package pbcompat

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"svcd/engine/schema"
)

// maxRecordBody bounds a JSON record body when Deps.ReadBody is not set.
const maxRecordBody = 16 << 20

// recordBody reads a JSON record body and translates PocketBase's members
// into svcd's: on auth collections passwordConfirm must equal password
// (400 validation_values_mismatch otherwise) and is dropped, verified
// becomes email_verified, and emailVisibility is dropped unless the
// collection has such a field. failed is the message of a refusal.
func (d *Deps) recordBody(w http.ResponseWriter, r *http.Request, c *schema.Collection, failed string) ([]byte, bool) {
	var body []byte
	var err error
	if d.ReadBody != nil {
		body, err = d.ReadBody(w, r)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, maxRecordBody))
	}
	if err != nil {
		WriteError(w, r, err)
		return nil, false
	}
	if c.Type != schema.TypeAuth || len(bytes.TrimSpace(body)) == 0 {
		return body, true
	}
	m, err := decodeObject(body)
	if err != nil {
		// Not an object: the engine answers it as for /api/v1.
		return body, true
	}
	data := map[string]any{}
	if pw, ok := m["password"]; ok {
		if conf, ok := m["passwordConfirm"]; !ok || conf != pw {
			data["passwordConfirm"] = FieldError{Code: "validation_values_mismatch", Message: "Values don't match."}
		}
	}
	if len(data) > 0 {
		WriteError(w, r, NewError(http.StatusBadRequest, failed, data))
		return nil, false
	}
	delete(m, "passwordConfirm")
	if v, ok := m["verified"]; ok {
		if !hasField(c, "verified") {
			m["email_verified"] = v
			delete(m, "verified")
		}
	}
	if _, ok := m["emailVisibility"]; ok && !hasField(c, "emailVisibility") {
		delete(m, "emailVisibility")
	}
	out, err := json.Marshal(m)
	if err != nil {
		WriteError(w, r, err)
		return nil, false
	}
	return out, true
}

func hasField(c *schema.Collection, name string) bool {
	for _, f := range c.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}
