package pbcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"svcd/engine"
	"svcd/engine/files"
	"svcd/engine/schema"
)

// formBudget bounds one plain value of a multipart record write the
// layer reads to translate (the files module bounds the form again).
const formBudget = 1 << 20

// pbParts translates the plain values of a multipart record write the
// way recordBody translates a JSON one: on an auth collection
// passwordConfirm must equal password and is dropped, verified becomes
// email_verified, emailVisibility is dropped unless the collection has
// such a field; in form values and in @jsonPayload alike. File parts pass
// through unread.
type pbParts struct {
	in       files.Parts
	c        *schema.Collection
	password *string
	confirm  *string
}

// formParts wraps parts for collection c (only auth collections have
// anything to translate).
func formParts(parts files.Parts, c *schema.Collection) files.Parts {
	if c.Type != schema.TypeAuth {
		return parts
	}
	return &pbParts{in: parts, c: c}
}

// errConfirm is a passwordConfirm that does not equal password.
var errConfirm = engine.ValidationError(map[string]string{"passwordConfirm": "does not match the password"})

func (p *pbParts) Next() (*files.Part, error) {
	for {
		part, err := p.in.Next()
		if errors.Is(err, io.EOF) {
			if p.password != nil && (p.confirm == nil || *p.confirm != *p.password) {
				return nil, errConfirm
			}
			return nil, err
		}
		if err != nil || part.FileName != "" {
			return part, err
		}
		b, err := io.ReadAll(io.LimitReader(part.Body, formBudget+1))
		if err != nil {
			return nil, err
		}
		if len(b) > formBudget {
			return nil, engine.Errorf(engine.KindTooLarge, "The form's values are too large (limit %d bytes)", formBudget)
		}
		if part.Name == "@jsonPayload" {
			if b, err = p.payload(b); err != nil {
				return nil, err
			}
		} else {
			name, keep := p.value(part.Name, string(b))
			if !keep {
				continue
			}
			part.Name = name
		}
		part.Body = bytes.NewReader(b)
		return part, nil
	}
}

// value notes a plain value and says under which name it goes on
// (keep false: dropped).
func (p *pbParts) value(name, v string) (string, bool) {
	switch name {
	case "password":
		p.password = &v
	case "passwordConfirm":
		p.confirm = &v
		return "", false
	case "verified":
		if !hasField(p.c, "verified") {
			return "email_verified", true
		}
	case "emailVisibility":
		return name, hasField(p.c, "emailVisibility")
	}
	return name, true
}

// payload translates the members of @jsonPayload as value does.
func (p *pbParts) payload(b []byte) ([]byte, error) {
	m, err := decodeObject(b)
	if err != nil {
		return b, nil // the files module answers a malformed payload
	}
	for _, k := range []string{"password", "passwordConfirm", "verified", "emailVisibility"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			// Compared as JSON; the engine judges the type.
			j, _ := json.Marshal(v)
			s = string(j)
		}
		delete(m, k)
		if name, keep := p.value(k, s); keep {
			m[name] = v
		}
	}
	return json.Marshal(m)
}
