package api

import (
	"svcd/engine"
	"svcd/engine/schema"
)

// visibleCollections decides which collections the document describes to
// the caller, and whether hidden fields are named:
//   - an admin session (any role: a viewer already reads every definition
//     under /admin/collections) gets every collection, hidden fields
//     included; an API token gets the collections its scopes reach;
//   - a signed-in user gets the collections with at least one rule that
//     is not admin-only (a filter rule may admit them);
//   - an anonymous caller gets only the collections with a rule open to
//     everyone ("").
func visibleCollections(p engine.Principal, all []*schema.Collection) (cols []*schema.Collection, withHidden bool) {
	if p.IsAdmin() {
		for _, c := range all {
			if p.HasAdminScope() || p.HasScope(c.Name, false) || p.HasScope(c.Name, true) {
				cols = append(cols, c)
			}
		}
		return cols, true
	}
	for _, c := range all {
		for _, rule := range recordRules(c) {
			if rule.rule != nil && (p.Kind == engine.User || *rule.rule == "") {
				cols = append(cols, c)
				break
			}
		}
	}
	return cols, false
}

// namedRule is one of a collection's record rules.
type namedRule struct {
	op   string
	rule *string
}

// recordRules lists the rules of c that have an endpoint (view collections
// take no writes).
func recordRules(c *schema.Collection) []namedRule {
	rules := []namedRule{{"view", c.ViewRule}}
	if c.Type != schema.TypeView {
		rules = append(rules, namedRule{"create", c.CreateRule}, namedRule{"update", c.UpdateRule}, namedRule{"delete", c.DeleteRule})
	}
	return rules
}

// recordOperations adds a collection's record endpoints to paths: list
// (filter, sort, page, perPage, expand...), create, get, update, delete.
// A non-admin sees only the operations whose rule is not admin-only.
func recordOperations(paths obj, c *schema.Collection, admin bool) {
	base := "/api/v1/" + c.Name
	tag := "records: " + c.Name
	rec, in := "record_"+c.Name, "record_"+c.Name+"_input"
	idParam := []obj{pathParam("id")}
	security := []obj{{"bearerAuth": []string{}}, {"apiToken": []string{}}, {}}
	op := func(method, path, summary string, params []obj, body, ok obj) obj {
		o := obj{
			"operationId": operationID(method, path),
			"summary":     summary,
			"tags":        []string{tag},
			"security":    security,
			"responses":   obj{"default": errorResponse()},
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		if body != nil {
			o["requestBody"] = body
		}
		switch method {
		case "delete":
			o["responses"].(obj)["204"] = obj{"description": "deleted"}
		case "post":
			o["responses"].(obj)["201"] = ok
		default:
			o["responses"].(obj)["200"] = ok
		}
		return o
	}
	list, item := obj{}, obj{}
	for _, r := range recordRules(c) {
		if r.rule == nil && !admin {
			continue
		}
		switch r.op {
		case "view":
			list["get"] = op("get", base, "List "+c.Name+" records", listParams(), nil, listResponse(rec))
			item["get"] = op("get", base+"/{id}", "Read one "+c.Name+" record", append(idParam, queryParam("expand", "relations to expand"), queryParam("fields", "fields to return")), nil, dataOf(ref(rec)))
		case "create":
			list["post"] = op("post", base, "Create a "+c.Name+" record", nil, jsonBody(ref(in)), dataOf(ref(rec)))
		case "update":
			item["patch"] = op("patch", base+"/{id}", "Update a "+c.Name+" record", idParam, jsonBody(ref(in)), dataOf(ref(rec)))
		case "delete":
			item["delete"] = op("delete", base+"/{id}", "Delete a "+c.Name+" record", idParam, nil, nil)
		}
	}
	if c.HistoryEnabled && (admin || c.ViewRule != nil) {
		// docs/history.md: reading follows the view rule; restoring is
		// for admins (editor or above).
		paths[base+"/{id}/history"] = obj{"get": op("get", base+"/{id}/history", "History of a "+c.Name+" record",
			append(idParam, queryParam("page", "page number"), queryParam("perPage", "entries per page")), nil,
			dataOf(obj{"type": "object", "additionalProperties": true}))}
		if admin {
			paths[base+"/{id}/restore"] = obj{"post": op("post", base+"/{id}/restore", "Restore a "+c.Name+" record as it was at a time",
				append(idParam, obj{"name": "at", "in": "query", "required": true, "description": "unix seconds", "schema": obj{"type": "integer"}}), nil,
				dataOf(ref(rec)))}
		}
	}
	if len(list) > 0 {
		paths[base] = list
	}
	if len(item) > 0 {
		paths[base+"/{id}"] = item
	}
}

// queryParam declares one optional string query parameter.
func queryParam(name, description string) obj {
	return obj{"name": name, "in": "query", "required": false, "description": description, "schema": obj{"type": "string"}}
}

// listParams are the query parameters of a record list (docs/api.md).
func listParams() []obj {
	page := obj{"name": "page", "in": "query", "required": false, "schema": obj{"type": "integer", "minimum": 1}}
	perPage := obj{"name": "perPage", "in": "query", "required": false, "schema": obj{"type": "integer", "minimum": 1}}
	return []obj{
		queryParam("filter", "filter expression (docs/filters.md)"),
		queryParam("sort", "comma-separated fields, - for descending"),
		page, perPage,
		queryParam("expand", "relations to expand"),
		queryParam("fields", "fields to return"),
		queryParam("skipTotal", "1 to skip counting"),
		queryParam("search", "full-text search"),
		queryParam("cursor", "keyset pagination cursor"),
	}
}

// listResponse is a page of records.
func listResponse(rec string) obj {
	return obj{"description": "a page of records", "content": obj{"application/json": obj{"schema": obj{
		"type": "object", "required": []string{"data"},
		"properties": obj{
			"data":       obj{"type": "array", "items": ref(rec)},
			"page":       obj{"type": "integer"},
			"perPage":    obj{"type": "integer"},
			"totalItems": obj{"type": "integer"},
			"totalPages": obj{"type": "integer"},
		}}}}}
}
