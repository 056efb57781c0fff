package mcp

import (
	"context"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"

	"svcd/engine"
)

// schemaTools (mcp:admin) change the schema and the server-side code;
// configTools (mcp:admin) settings, flags and custom webhook events. Each
// calls the admin route of the same name as the token's admin: the role
// table decides (developer for schema and code, owner for settings).
func (s *Server) schemaTools() []*Tool {
	post := func(path string) func(context.Context, Caller, map[string]any) (any, error) {
		return func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "POST", Path: path, Body: args})
		}
	}
	// Each property gets its own schema value: a resolved schema may not
	// hold one node twice.
	rule := func() *jsonschema.Schema {
		return &jsonschema.Schema{Types: []string{"string", "null"}, Description: `null: admins only; "": everyone; else a filter, e.g. @request.auth.id != ""`}
	}
	return []*Tool{{
		Name: ToolPrefix + "create_collection", Title: "Create a collection",
		Description: "Create a collection. Field types: text, editor, email, url, number, bool, date, autodate, select, json, geoPoint, relation, file, password, vector; " +
			"options as in docs/collections.md (e.g. {\"name\":\"title\",\"type\":\"text\",\"required\":true,\"max\":200}).",
		Scope: ScopeAdmin,
		Input: object(map[string]*jsonschema.Schema{
			"name":            str("collection name: letters, digits, _; not a reserved word"),
			"type":            enum("collection type (default base)", "base", "auth", "view"),
			"fields":          {Type: "array", Items: anyObject("field: {name, type, required?, unique?, hidden?, ...options}")},
			"view_rule":       rule(),
			"create_rule":     rule(),
			"update_rule":     rule(),
			"delete_rule":     rule(),
			"history_enabled": boolean("keep record history"),
			"view_query":      str("view collections: one SQL SELECT"),
		}, "name"),
		run: post("/admin/collections"),
	}, {
		Name: ToolPrefix + "alter_collection", Title: "Alter a collection",
		Description: "Change a collection: changes is a partial collection (rename, fields — the full new list —, rules). Data migrates with it.",
		Scope:       ScopeAdmin, Destructive: true,
		Input: closed(map[string]*jsonschema.Schema{
			"name":    str("collection name or id"),
			"changes": anyObject("partial collection JSON"),
		}, "name", "changes"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "PATCH",
				Path: "/admin/collections/" + url.PathEscape(argString(args, "name")), Body: args["changes"]})
		},
	}, {
		Name: ToolPrefix + "create_hook", Title: "Create a record hook",
		Description: "JavaScript run on a record event (the body of an async function; ctx, record, existing, auth, helpers in scope).",
		Scope:       ScopeAdmin,
		Input: closed(map[string]*jsonschema.Schema{
			"collection": str("collection name"),
			"event":      str("e.g. beforeCreate, afterCreate, beforeUpdate, afterUpdate, beforeDelete, afterDelete"),
			"code":       str("JavaScript"),
			"enabled":    boolean("default true"),
			"order":      integer("run order among the collection's hooks"),
		}, "collection", "event", "code"),
		run: post("/admin/hooks"),
	}, {
		Name: ToolPrefix + "create_route", Title: "Create a custom route",
		Description: "A JavaScript HTTP route served at /api/v1/custom/<path> (:param segments fill params); return the JSON answer.",
		Scope:       ScopeAdmin,
		Input: closed(map[string]*jsonschema.Schema{
			"method":  enum("HTTP method", "GET", "POST", "PUT", "PATCH", "DELETE"),
			"path":    str("path under /custom/, e.g. stats/:collection"),
			"code":    str("JavaScript"),
			"enabled": boolean("default true"),
		}, "method", "path", "code"),
		run: post("/admin/routes"),
	}, {
		Name: ToolPrefix + "create_job", Title: "Create a scheduled job",
		Description: "JavaScript run on a 5-field UTC cron, or once at run_at (unix seconds); mode inline or worker:<queue>.",
		Scope:       ScopeAdmin,
		Input: closed(map[string]*jsonschema.Schema{
			"name":    str("job name"),
			"cron":    str("5-field cron, UTC"),
			"run_at":  integer("one-off time, unix seconds", 0),
			"mode":    str("inline (default) or worker:<queue>"),
			"code":    str("JavaScript"),
			"enabled": boolean("default true"),
		}, "name", "code"),
		run: post("/admin/jobs"),
	}, {
		Name: ToolPrefix + "run_job_now", Title: "Run a job now",
		Description: "Run a scheduled job once now, whatever its schedule.",
		Scope:       ScopeAdmin,
		Input:       closed(map[string]*jsonschema.Schema{"id": str("job id")}, "id"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "POST", Path: "/admin/jobs/" + url.PathEscape(argString(args, "id")) + "/run"})
		},
	}}
}

func (s *Server) configTools() []*Tool {
	return []*Tool{{
		Name: ToolPrefix + "list_settings", Title: "List settings",
		Description: "Runtime settings (key to string); secret values are masked.",
		Scope:       ScopeAdmin, ReadOnly: true, Input: closed(nil),
		run: func(ctx context.Context, c Caller, _ map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/settings"})
		},
	}, {
		Name: ToolPrefix + "update_setting", Title: "Update a setting",
		Description: "Set one runtime setting (values are strings; see docs/api.md for the keys).",
		Scope:       ScopeAdmin,
		Input:       closed(map[string]*jsonschema.Schema{"key": str("setting key"), "value": str("new value")}, "key", "value"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "PATCH", Path: "/admin/settings",
				Body: map[string]any{argString(args, "key"): argString(args, "value")}})
		},
	}, {
		Name: ToolPrefix + "update_flag", Title: "Update a feature flag",
		Description: "Change a feature flag: changes is a partial flag {enabled?, default_value?, variations?, rules?}.",
		Scope:       ScopeAdmin,
		Input:       closed(map[string]*jsonschema.Schema{"key": str("flag key"), "changes": anyObject("partial flag JSON")}, "key", "changes"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "PATCH",
				Path: "/admin/flags/" + url.PathEscape(argString(args, "key")), Body: args["changes"]})
		},
	}, {
		Name: ToolPrefix + "dispatch_webhook_event", Title: "Dispatch a webhook event",
		Description: "Send a custom event to every enabled webhook whose patterns match it (as helpers.webhooks.dispatch).",
		Scope:       ScopeAdmin,
		Input:       closed(map[string]*jsonschema.Schema{"event": str("event name, e.g. order.shipped"), "data": anyValue("any JSON value")}, "event"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			if c.Principal.Role < engine.RoleDeveloper {
				return nil, toolErrorf("dispatching webhook events needs the developer role")
			}
			if s.opts.Events == nil {
				return nil, toolErrorf("not available: webhooks are not running on this node")
			}
			ids, _, err := s.opts.Events.DispatchEvent(ctx, argString(args, "event"), args["data"])
			if err != nil {
				return nil, toolErrorf("%v", err)
			}
			if ids == nil {
				ids = []string{}
			}
			return map[string]any{"deliveries": ids}, nil
		},
	}}
}
