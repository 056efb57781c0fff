package api

import (
	"strings"

	"svcd/engine/schema"
)

// obj is one node of the OpenAPI document under construction; encoding/json
// writes its keys sorted, so the document is the same for the same routes
// and collections.
type obj = map[string]any

// recordSchemas returns the components for one collection's records: the
// record as the API answers it, and the body a create or update sends
// (input). Hidden fields are left out unless withHidden (admins see them);
// names maps the ids of the collections the caller may see to their names
// (a relation to another collection says only "another collection").
func recordSchemas(c *schema.Collection, withHidden bool, names map[string]string) (record, input obj) {
	props := obj{
		"id":             obj{"type": "string", "readOnly": true},
		"collectionId":   obj{"type": "string", "readOnly": true},
		"collectionName": obj{"type": "string", "readOnly": true},
		"created":        obj{"type": "integer", "format": "int64", "description": "unix seconds", "readOnly": true},
		"updated":        obj{"type": "integer", "format": "int64", "description": "unix seconds", "readOnly": true},
	}
	inProps := obj{}
	var required []string
	if c.Type == schema.TypeAuth {
		props["email"] = obj{"type": "string", "format": "email"}
		props["email_verified"] = obj{"type": "boolean", "readOnly": true}
		props["is_anonymous"] = obj{"type": "integer", "enum": []int{0, 1}, "readOnly": true}
		inProps["email"] = obj{"type": "string", "format": "email"}
		inProps["password"] = obj{"type": "string", "format": "password", "writeOnly": true}
	}
	for _, f := range c.Fields {
		if f.Hidden && !withHidden {
			continue
		}
		s := fieldSchema(f, names)
		if f.Type != "password" {
			props[f.Name] = s
		}
		if f.Type == "autodate" || c.Type == schema.TypeView {
			continue
		}
		inProps[f.Name] = s
		if f.Required {
			required = append(required, f.Name)
		}
	}
	record = obj{"type": "object", "properties": props,
		"description": "A record of " + c.Name + " as the API answers it."}
	input = obj{"type": "object", "properties": inProps,
		"description": "The body that creates or updates a record of " + c.Name + " (an update may leave any field out)."}
	if len(required) > 0 {
		input["description"] = input["description"].(string) + " Required on create: " + strings.Join(required, ", ") + "."
	}
	return record, input
}

// fieldSchema maps one field's type and options to a JSON schema.
func fieldSchema(f *schema.Field, names map[string]string) obj {
	var s obj
	switch f.Type {
	case "text", "editor":
		s = obj{"type": "string"}
		bounds(s, f, "minLength", "maxLength")
		if f.Pattern != "" {
			s["pattern"] = "^(?:" + f.Pattern + ")$"
		}
	case "email":
		s = obj{"type": "string", "format": "email"}
	case "url":
		s = obj{"type": "string", "format": "uri"}
	case "password":
		s = obj{"type": "string", "format": "password", "writeOnly": true}
		bounds(s, f, "minLength", "maxLength")
	case "number":
		s = obj{"type": "number"}
		if f.Integer {
			s["type"] = "integer"
		}
		bounds(s, f, "minimum", "maximum")
	case "bool":
		s = obj{"type": "boolean"}
	case "date":
		s = obj{"type": "integer", "format": "int64", "description": "unix seconds (an ISO 8601 date is accepted on input)"}
		bounds(s, f, "minimum", "maximum")
	case "autodate":
		s = obj{"type": "integer", "format": "int64", "description": "unix seconds, set by the server", "readOnly": true}
	case "select":
		s = obj{"type": "string"}
		if len(f.Values) > 0 {
			s["enum"] = f.Values
		}
	case "json":
		s = obj{"description": "any JSON value"}
	case "geoPoint":
		s = obj{"type": "object", "required": []string{"lon", "lat"}, "properties": obj{
			"lon": obj{"type": "number", "minimum": -180, "maximum": 180},
			"lat": obj{"type": "number", "minimum": -90, "maximum": 90},
		}}
	case "relation":
		target := "another collection"
		if name, ok := names[f.Collection]; ok {
			target = "collection " + name
		}
		s = obj{"type": "string", "description": "id of a record of " + target}
	case "file":
		s = obj{"type": "string", "description": "file name; upload through /api/v1/files/{collection}/{recordId}/{field}"}
	case "vector":
		s = obj{"type": "array", "items": obj{"type": "number"}}
		if f.Dimensions > 0 {
			s["minItems"], s["maxItems"] = f.Dimensions, f.Dimensions
		}
	default:
		s = obj{}
	}
	if f.Multiple && (f.Type == "select" || f.Type == "relation" || f.Type == "file") {
		s = obj{"type": "array", "items": s}
		if f.MaxSelect > 0 {
			s["maxItems"] = f.MaxSelect
		}
	}
	if _, typed := s["type"]; typed && !f.Required && f.Type != "bool" && f.Type != "autodate" {
		s["nullable"] = true
	}
	return s
}

// bounds copies a field's min and max into the schema keywords named; a
// zero bound on text means none.
func bounds(s obj, f *schema.Field, minKey, maxKey string) {
	text := minKey == "minLength"
	if f.Min != nil && !(text && *f.Min == 0) {
		s[minKey] = *f.Min
	}
	if f.Max != nil && !(text && *f.Max == 0) {
		s[maxKey] = *f.Max
	}
}
