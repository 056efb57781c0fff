package pbschema

import "fmt"

// PBCollection is a PocketBase collection as its API and its
// _collections table (fields/indexes/options) describe it, 0.23+ shape.
// Auth options are flattened into it as PocketBase's JSON does.
type PBCollection struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	System     bool      `json:"system"`
	Fields     []PBField `json:"fields"`
	Indexes    []string  `json:"indexes"`
	ListRule   *string   `json:"listRule"`
	ViewRule   *string   `json:"viewRule"`
	CreateRule *string   `json:"createRule"`
	UpdateRule *string   `json:"updateRule"`
	DeleteRule *string   `json:"deleteRule"`
	Created    string    `json:"created,omitempty"`
	Updated    string    `json:"updated,omitempty"`

	// view collections
	ViewQuery string `json:"viewQuery,omitempty"`

	// auth collections
	AuthRule     *string    `json:"authRule,omitempty"`
	ManageRule   *string    `json:"manageRule,omitempty"`
	PasswordAuth *PBEnabled `json:"passwordAuth,omitempty"`
	OTP          *PBEnabled `json:"otp,omitempty"`
	MFA          *PBEnabled `json:"mfa,omitempty"`
	OAuth2       *PBOAuth2  `json:"oauth2,omitempty"`
}

// PBEnabled is the part of PocketBase's passwordAuth, otp and mfa options
// the translation reads (the rest is reported by name).
type PBEnabled struct {
	Enabled        bool     `json:"enabled"`
	IdentityFields []string `json:"identityFields,omitempty"`
	Duration       int64    `json:"duration,omitempty"`
	Length         int      `json:"length,omitempty"`
	Rule           string   `json:"rule,omitempty"`
}

// PBOAuth2 is PocketBase's oauth2 auth option.
type PBOAuth2 struct {
	Enabled   bool             `json:"enabled"`
	Providers []map[string]any `json:"providers,omitempty"`
}

// PBField is one PocketBase field: the common members plus every option
// of every type, flattened as PocketBase's JSON has them. Min and Max are
// numbers (text, number, password) or date strings (date).
type PBField struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	System      bool   `json:"system"`
	Hidden      bool   `json:"hidden"`
	Presentable bool   `json:"presentable"`
	Required    bool   `json:"required"`
	Help        string `json:"help,omitempty"`

	Min                 any      `json:"min,omitempty"`
	Max                 any      `json:"max,omitempty"`
	Pattern             string   `json:"pattern,omitempty"`
	AutogeneratePattern string   `json:"autogeneratePattern,omitempty"`
	PrimaryKey          bool     `json:"primaryKey,omitempty"`
	OnlyInt             bool     `json:"onlyInt,omitempty"`
	ExceptDomains       []string `json:"exceptDomains,omitempty"`
	OnlyDomains         []string `json:"onlyDomains,omitempty"`
	MaxSize             int64    `json:"maxSize,omitempty"`
	ConvertURLs         bool     `json:"convertURLs,omitempty"`
	OnCreate            bool     `json:"onCreate,omitempty"`
	OnUpdate            bool     `json:"onUpdate,omitempty"`
	Values              []string `json:"values,omitempty"`
	MaxSelect           int      `json:"maxSelect,omitempty"`
	MinSelect           int      `json:"minSelect,omitempty"`
	MimeTypes           []string `json:"mimeTypes,omitempty"`
	Thumbs              []string `json:"thumbs,omitempty"`
	Protected           bool     `json:"protected,omitempty"`
	CollectionID        string   `json:"collectionId,omitempty"`
	CascadeDelete       bool     `json:"cascadeDelete,omitempty"`
	Cost                int      `json:"cost,omitempty"`
}

// Collection is svcd's collection definition in the JSON shape of
// POST /api/v1/admin/collections, plus the single-field indexes to create
// through /api/v1/admin/collections/:c/indexes.
type Collection struct {
	Name        string              `json:"name"`
	Type        string              `json:"type"`
	Fields      []Field             `json:"fields"`
	ViewRule    *string             `json:"view_rule"`
	CreateRule  *string             `json:"create_rule"`
	UpdateRule  *string             `json:"update_rule"`
	DeleteRule  *string             `json:"delete_rule"`
	ViewQuery   string              `json:"view_query,omitempty"`
	AuthOptions *AuthOptions        `json:"auth_options,omitempty"`
	Indexes     []Index             `json:"-"`
	Thumbs      map[string][]string `json:"-"`
}

// Field is one svcd field in the admin API's flat JSON shape: id, name,
// type, required, unique, hidden and the options of its type (svcd's
// names: min, max, integer, domains_only, values, multiple, max_select,
// collection, cascade, max_size, maxSize, mimeTypes, protected, ...).
type Field map[string]any

// Name is the field's name.
func (f Field) Name() string { s, _ := f["name"].(string); return s }

// AuthOptions are svcd's per auth collection switches.
type AuthOptions struct {
	Password  bool `json:"password"`
	OTP       bool `json:"otp"`
	Anonymous bool `json:"anonymous"`
	MFA       bool `json:"mfa"`
	OAuth2    bool `json:"oauth2"`
}

// Index is one svcd index: one field, unique or not.
type Index struct {
	Field  string `json:"field"`
	Unique bool   `json:"unique"`
}

// Problem is one thing the translation could not carry over exactly.
// Where names the member ("name", "fields.title.autogeneratePattern",
// "listRule", "indexes[2]", ...), Original is PocketBase's text when
// there is one, and Message says what svcd does instead.
type Problem struct {
	Where    string `json:"where"`
	Original string `json:"original,omitempty"`
	Message  string `json:"message"`
	// Security marks losses that weaken access control (authRule,
	// manageRule, a rule that became admin-only is not one: it fails
	// closed).
	Security bool `json:"security,omitempty"`
}

func (p Problem) String() string {
	if p.Original != "" {
		return fmt.Sprintf("%s: %s (was %q)", p.Where, p.Message, p.Original)
	}
	return p.Where + ": " + p.Message
}

// Lookup resolves the other collections a definition refers to (relation
// targets, @collection.<name> in rules) to their svcd names. A nil Lookup
// keeps names as they are.
type Lookup interface {
	// SvcdName maps a PocketBase collection id or name to the svcd name
	// it has (after renaming); ok is false when it is unknown.
	SvcdName(pbIDOrName string) (name string, ok bool)
}
