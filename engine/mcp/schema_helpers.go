package mcp

import "github.com/google/jsonschema-go/jsonschema"

// Small constructors of the tools' input schemas (JSON Schema 2020-12, as
// the protocol wants, through github.com/google/jsonschema-go).

func object(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	if props == nil {
		props = map[string]*jsonschema.Schema{}
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

// closed is object with no other members allowed.
func closed(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	s := object(props, required...)
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

// integer is an integer schema; bounds are the minimum and the maximum.
func integer(desc string, bounds ...float64) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "integer", Description: desc}
	if len(bounds) > 0 {
		s.Minimum = &bounds[0]
	}
	if len(bounds) > 1 {
		s.Maximum = &bounds[1]
	}
	return s
}

func anyValue(desc string) *jsonschema.Schema { return &jsonschema.Schema{Description: desc} }

func anyObject(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: desc}
}

func enum(desc string, values ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}
