package mcp

import (
	"context"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"

	"svcd/engine/schema"
)

// recordTools are the five tools of one collection (list and get under
// mcp:read; create, update and delete under mcp:write; a view collection
// has only the first two). They call the record routes as the token's
// admin (Caller.recordPrincipal): the rules, hidden fields, relations,
// validation, hooks and the Raft path are the REST API's own.
func (s *Server) recordTools(col *schema.Collection) []*Tool {
	name := col.Name
	base := "/" + url.PathEscape(name)
	item := func(args map[string]any) string { return base + "/" + url.PathEscape(argString(args, "id")) }
	idArg := str("record id (15 characters of a-z0-9)")
	tools := []*Tool{{
		Name:  ToolPrefix + "list_" + name,
		Title: "List " + name,
		Description: "List records of the " + name + " collection the token's admin may read, one page at a time. " +
			"filter uses svcd's filter language (e.g. `title ~ \"draft\" && created > 1700000000`); sort is a comma list of fields, `-` for descending.",
		Scope: ScopeRead, ReadOnly: true,
		Input: closed(map[string]*jsonschema.Schema{
			"filter":  str("filter expression"),
			"sort":    str("e.g. -created,title"),
			"page":    integer("page number, from 1", 1),
			"perPage": integer("records per page (default 30, at most 500)", 1, 500),
			"expand":  str("relation fields to expand, comma separated"),
			"fields":  str("fields to return, comma separated"),
			"search":  str("full-text search terms (searchable fields)"),
		}),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.recordPrincipal(), Call{Method: "GET", Path: base,
				Query: query(args, "filter", "sort", "page", "perPage", "expand", "fields", "search")})
		},
	}, {
		Name:        ToolPrefix + "get_" + name,
		Title:       "Get a " + name + " record",
		Description: "Read one record of " + name + " by id (404 when it does not exist or the rules hide it).",
		Scope:       ScopeRead, ReadOnly: true,
		Input: closed(map[string]*jsonschema.Schema{
			"id": idArg, "expand": str("relation fields to expand"), "fields": str("fields to return"),
		}, "id"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.recordPrincipal(), Call{Method: "GET", Path: item(args), Query: query(args, "expand", "fields")})
		},
	}}
	if col.Type == schema.TypeView {
		return tools
	}
	props := fieldProps(col)
	create := object(props)
	create.Properties["id"] = str("optional record id (15 characters of a-z0-9); generated when absent")
	create.Required = requiredFields(col)
	update := object(clone(props), "id")
	update.Properties["id"] = idArg
	return append(tools, &Tool{
		Name:        ToolPrefix + "create_" + name,
		Title:       "Create a " + name + " record",
		Description: "Create a record in " + name + ". Arguments are the record's fields. The collection's create rule applies as for the token's admin.",
		Scope:       ScopeWrite, Input: create,
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.recordPrincipal(), Call{Method: "POST", Path: base, Body: args})
		},
	}, &Tool{
		Name:        ToolPrefix + "update_" + name,
		Title:       "Update a " + name + " record",
		Description: "Change fields of one " + name + " record: id plus the fields to change.",
		Scope:       ScopeWrite, Input: update,
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			body := map[string]any{}
			for k, v := range args {
				if k != "id" {
					body[k] = v
				}
			}
			return s.rest(ctx, c.recordPrincipal(), Call{Method: "PATCH", Path: item(args), Body: body})
		},
	}, &Tool{
		Name:        ToolPrefix + "delete_" + name,
		Title:       "Delete a " + name + " record",
		Description: "Delete one " + name + " record by id (relations cascade or restrict as the schema says).",
		Scope:       ScopeWrite, Destructive: true,
		Input: closed(map[string]*jsonschema.Schema{"id": idArg}, "id"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			if _, err := s.rest(ctx, c.recordPrincipal(), Call{Method: "DELETE", Path: item(args)}); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": argString(args, "id")}, nil
		},
	})
}

func clone(m map[string]*jsonschema.Schema) map[string]*jsonschema.Schema {
	out := make(map[string]*jsonschema.Schema, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// requiredFields are the fields a create must carry.
func requiredFields(col *schema.Collection) []string {
	var out []string
	for _, f := range col.Fields {
		if f.Required && writable(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// writable reports whether a JSON body may set f (autodate fields are
// the server's; files go through multipart uploads).
func writable(f *schema.Field) bool {
	return f.Type != schema.FieldAutodate && f.Type != schema.FieldFile
}

// fieldProps maps the collection's writable fields to JSON Schemas; an
// auth collection adds its account fields.
func fieldProps(col *schema.Collection) map[string]*jsonschema.Schema {
	props := map[string]*jsonschema.Schema{}
	if col.Type == schema.TypeAuth {
		props["email"] = &jsonschema.Schema{Type: "string", Format: "email", Description: "account email"}
		props["password"] = str("account password (the password policy applies)")
		props["email_verified"] = boolean("whether the email is verified (admins only)")
	}
	for _, f := range col.Fields {
		if writable(f) {
			props[f.Name] = fieldSchema(f)
		}
	}
	return props
}

// fieldSchema is the JSON Schema of one field's value.
func fieldSchema(f *schema.Field) *jsonschema.Schema {
	desc := f.Type + " field"
	if f.Unique {
		desc += ", unique"
	}
	var s *jsonschema.Schema
	switch f.Type {
	case schema.FieldText, schema.FieldEditor, schema.FieldPassword:
		s = str(desc)
		if f.Type == schema.FieldText && f.Min != nil {
			n := int(*f.Min)
			s.MinLength = &n
		}
		if f.Type == schema.FieldText && f.Max != nil && *f.Max > 0 {
			n := int(*f.Max)
			s.MaxLength = &n
		}
	case schema.FieldEmail:
		s = &jsonschema.Schema{Type: "string", Format: "email", Description: desc}
	case schema.FieldURL:
		s = &jsonschema.Schema{Type: "string", Format: "uri", Description: desc}
	case schema.FieldNumber:
		s = &jsonschema.Schema{Type: "number", Description: desc, Minimum: f.Min, Maximum: f.Max}
		if f.Integer {
			s.Type = "integer"
		}
	case schema.FieldBool:
		s = boolean(desc)
	case schema.FieldDate:
		s = &jsonschema.Schema{Types: []string{"integer", "string"}, Description: desc + ": unix seconds or ISO 8601"}
	case schema.FieldSelect:
		one := enum(desc, f.Values...)
		s = one
		if f.Multiple {
			s = &jsonschema.Schema{Type: "array", Items: one, Description: desc}
		}
	case schema.FieldRelation:
		s = str(desc + ": id of a record of the related collection")
		if f.Multiple {
			s = &jsonschema.Schema{Type: "array", Items: str("record id"), Description: desc + ": ids of related records"}
		}
	case schema.FieldGeoPoint:
		lon, lat := -180.0, -90.0
		lonMax, latMax := 180.0, 90.0
		s = closed(map[string]*jsonschema.Schema{
			"lon": {Type: "number", Minimum: &lon, Maximum: &lonMax},
			"lat": {Type: "number", Minimum: &lat, Maximum: &latMax},
		}, "lon", "lat")
		s.Description = desc
	case schema.FieldVector:
		s = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "number"}, Description: desc}
		if f.Dimensions > 0 {
			n := f.Dimensions
			s.MinItems, s.MaxItems = &n, &n
		}
	default: // json and anything newer: any JSON value
		s = anyValue(desc + ": any JSON value")
	}
	return s
}
