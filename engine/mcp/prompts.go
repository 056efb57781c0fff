package mcp

import (
	"embed"
	"encoding/json"
	"strings"
)

//go:embed prompts/*.md
var promptFiles embed.FS

type promptArg struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

type promptDef struct {
	Name        string      `json:"name"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Arguments   []promptArg `json:"arguments"`
	// blank fills an optional argument left out.
	blank map[string]string
}

// prompts are SPEC.md's five; their text is prompts/<name>.md with
// {{argument}} placeholders.
var prompts = []promptDef{
	{Name: "design-collection", Title: "Design a collection",
		Description: "Turn a description of data into an svcd collection: type, fields with options, and rules.",
		Arguments:   []promptArg{{"description", "what the collection holds and who may read or write it", true}}},
	{Name: "debug-request", Title: "Debug a request",
		Description: "Find why an svcd request failed: the status, the rule or validation at fault, and the fix.",
		Arguments: []promptArg{{"request", "method, path, headers and body sent", true},
			{"response", "status and body received", false}},
		blank: map[string]string{"response": "(not given: ask for it if the status is needed)"}},
	{Name: "audit-rules", Title: "Audit access rules",
		Description: "Review collections' rules for over-broad access, missing ownership checks and leaks.",
		Arguments:   []promptArg{{"collection", "a collection name, or all (default)", false}},
		blank:       map[string]string{"collection": "all collections"}},
	{Name: "optimize-schema", Title: "Optimize the schema",
		Description: "Find missing indexes, costly rules and schema problems, with the evidence and the change.",
		Arguments:   []promptArg{{"focus", "a collection or query to focus on", false}},
		blank:       map[string]string{"focus": ""}},
	{Name: "import-from-pocketbase", Title: "Import from PocketBase",
		Description: "Migrate a PocketBase schema export (pb_schema.json) to svcd collections, field by field and rule by rule.",
		Arguments:   []promptArg{{"schema", "the PocketBase collections export (JSON)", true}}},
}

func listPrompts() any { return map[string]any{"prompts": prompts} }

func getPrompt(raw json.RawMessage) (any, error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	for _, d := range prompts {
		if d.Name != p.Name {
			continue
		}
		body, err := promptFiles.ReadFile("prompts/" + d.Name + ".md")
		if err != nil {
			return nil, err
		}
		text := string(body)
		for _, a := range d.Arguments {
			v, ok := p.Arguments[a.Name]
			if !ok || v == "" {
				if a.Required {
					return nil, rpcErr(CodeInvalidParams, "Missing required argument: "+a.Name)
				}
				v = d.blank[a.Name]
			} else if a.Name == "focus" {
				v = ", focusing on " + v
			}
			text = strings.ReplaceAll(text, "{{"+a.Name+"}}", v)
		}
		return map[string]any{
			"description": d.Description,
			"messages":    []map[string]any{{"role": "user", "content": map[string]any{"type": "text", "text": text}}},
		}, nil
	}
	return nil, rpcErr(CodeInvalidParams, "Unknown prompt: "+p.Name)
}
