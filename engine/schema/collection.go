package schema

import "encoding/json"

// Collection types.
const (
	TypeBase = "base"
	TypeAuth = "auth"
	TypeView = "view"
)

// Collection is a user-defined table with typed fields and access rules.
// Rules are nil (admin only), "" (everyone) or a filter expression.
type Collection struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	Fields         []*Field     `json:"fields"`
	ViewRule       *string      `json:"view_rule"`
	CreateRule     *string      `json:"create_rule"`
	UpdateRule     *string      `json:"update_rule"`
	DeleteRule     *string      `json:"delete_rule"`
	HistoryEnabled bool         `json:"history_enabled"`
	ViewQuery      string       `json:"view_query"`
	AuthOptions    *AuthOptions `json:"auth_options,omitempty"`
	Created        int64        `json:"created"`
	Updated        int64        `json:"updated"`
	// Version counts schema changes; a record command carries the version
	// it was validated against and the FSM refuses it if the schema moved.
	Version int64 `json:"-"`
}

// AuthOptions switches auth features per auth collection; each is ANDed with
// the global auth.<feature>.enabled setting.
type AuthOptions struct {
	Password  bool `json:"password"`
	OTP       bool `json:"otp"`
	Anonymous bool `json:"anonymous"`
	MFA       bool `json:"mfa"`
	OAuth2    bool `json:"oauth2"`
}

// UnmarshalJSON starts from the defaults, so options left out of a body
// keep their default instead of turning off.
func (o *AuthOptions) UnmarshalJSON(b []byte) error {
	type plain AuthOptions
	p := plain(*DefaultAuthOptions())
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*o = AuthOptions(p)
	return nil
}

// DefaultAuthOptions are CONTRACT.md's defaults.
func DefaultAuthOptions() *AuthOptions {
	return &AuthOptions{Password: true, MFA: true, OAuth2: true}
}

// Field returns the field with the given name, or nil.
func (c *Collection) Field(name string) *Field {
	for _, f := range c.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FieldByID returns the field with the given id, or nil.
func (c *Collection) FieldByID(id string) *Field {
	for _, f := range c.Fields {
		if f.ID == id {
			return f
		}
	}
	return nil
}
