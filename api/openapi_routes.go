package api

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/api/pbcompat"
)

// documentedMethods are the methods the document describes (chi also
// registers CONNECT, TRACE and the like for catch-all handlers).
var documentedMethods = map[string]bool{
	http.MethodGet: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true,
}

// paramPattern matches chi's {name} or {name:regexp} segments.
var paramPattern = regexp.MustCompile(`\{([a-zA-Z_][a-zA-Z0-9_]*)(:[^}]*)?\}`)

// genericRecordRoute tells the routes that serve every collection: the
// document lists them once per collection instead (openapi_records.go).
func genericRecordRoute(route string) bool {
	return strings.HasPrefix(route, "/api/v1/{collection}")
}

// routeOperations walks the router and describes every route outside the
// record routes: its path in OpenAPI's {name} form, its path parameters,
// a tag naming its resource, and whether it needs credentials.
func (s *Server) routeOperations(paths obj, tags map[string]bool) {
	chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		// PocketBase's paths (api/pbcompat) are documented by
		// docs/pocketbase.md, not by svcd's OpenAPI document.
		if !documentedMethods[method] || genericRecordRoute(route) || pbcompat.OwnsPath(route) {
			return nil
		}
		path, params := openapiPath(route)
		tag := routeTag(path)
		tags[tag] = true
		op := obj{
			"operationId": operationID(method, path),
			"summary":     method + " " + path,
			"tags":        []string{tag},
			"responses":   genericResponses(method),
			"security":    routeSecurity(path),
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if body := routeBody(method, path); body != nil {
			op["requestBody"] = body
		} else if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
			op["requestBody"] = obj{"required": false, "content": obj{"application/json": obj{"schema": obj{"type": "object"}}}}
		}
		if resp := routeResponse(method, path); resp != nil {
			op["responses"].(obj)["200"] = resp
		}
		item, _ := paths[path].(obj)
		if item == nil {
			item = obj{}
			paths[path] = item
		}
		item[strings.ToLower(method)] = op
		return nil
	})
}

// openapiPath turns a chi pattern into an OpenAPI path with its path
// parameters; a trailing catch-all /* becomes {path}.
func openapiPath(route string) (string, []obj) {
	if strings.HasSuffix(route, "/*") {
		route = strings.TrimSuffix(route, "*") + "{path}"
	}
	if len(route) > 1 {
		route = strings.TrimSuffix(route, "/")
	}
	var params []obj
	path := paramPattern.ReplaceAllStringFunc(route, func(m string) string {
		name := paramPattern.FindStringSubmatch(m)[1]
		params = append(params, pathParam(name))
		return "{" + name + "}"
	})
	return path, params
}

// pathParam declares one required string path parameter.
func pathParam(name string) obj {
	return obj{"name": name, "in": "path", "required": true, "schema": obj{"type": "string"}}
}

// routeTag names the resource of a path: "admin collections", "auth",
// "probes"...
func routeTag(path string) string {
	switch {
	case strings.HasPrefix(path, "/_/"):
		return "probes"
	case strings.HasPrefix(path, "/realtime"):
		return "realtime"
	}
	segs := strings.Split(strings.TrimPrefix(path, "/api/v1/"), "/")
	if segs[0] == "admin" && len(segs) > 1 {
		return "admin " + segs[1]
	}
	if segs[0] == "_" {
		return "metrics"
	}
	return segs[0]
}

// operationID is a stable id from the method and path, for example
// get_api_v1_admin_collections_name.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '/' || r == '-' || r == '.':
			b.WriteByte('_')
		case r == '_':
			// the /_/ segment (the metrics snapshot) stays distinct from
			// the route without it (/api/v1/metrics)
			b.WriteString("x")
		}
	}
	return strings.ReplaceAll(b.String(), "__", "_")
}

// openPaths need no credentials at all; the rest of /admin and the metrics
// snapshot need an admin token or an API token, and every other route takes
// one when sent (its rules decide).
var openPaths = []string{"/_/", "/api/v1/admin/setup", "/api/v1/admin/auth/login", "/api/v1/openapi.json", "/api/v1/docs"}

// routeSecurity is the security requirement of a path.
func routeSecurity(path string) []obj {
	for _, p := range openPaths {
		if strings.HasPrefix(path, p) {
			return []obj{}
		}
	}
	required := []obj{{"bearerAuth": []string{}}, {"apiToken": []string{}}}
	if strings.HasPrefix(path, "/api/v1/admin/") || strings.HasPrefix(path, "/api/v1/_/") {
		return required
	}
	return append(required, obj{})
}

// genericResponses: a success with the data envelope, and the error
// envelope for anything else.
func genericResponses(method string) obj {
	ok := obj{"description": "success", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Data"}}}}
	status := "200"
	if method == http.MethodDelete {
		ok, status = obj{"description": "deleted (some routes answer 200 with data)"}, "204"
	}
	return obj{status: ok, "default": errorResponse()}
}

// errorResponse refers to SPEC.md's error envelope.
func errorResponse() obj {
	return obj{"description": "error envelope", "content": obj{"application/json": obj{"schema": obj{"$ref": "#/components/schemas/Error"}}}}
}

// jsonBody is a required JSON request body of the given schema.
func jsonBody(schema obj) obj {
	return obj{"required": true, "content": obj{"application/json": obj{"schema": schema}}}
}

// dataOf answers {"data": schema}.
func dataOf(schema obj) obj {
	return obj{"description": "success", "content": obj{"application/json": obj{"schema": obj{
		"type": "object", "required": []string{"data"}, "properties": obj{"data": schema}}}}}
}

// ref points at a component schema.
func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// routeBody gives the request bodies of the main control-plane resources.
func routeBody(method, path string) obj {
	switch {
	case path == "/api/v1/admin/collections" && method == http.MethodPost,
		path == "/api/v1/admin/collections/{name}" && method == http.MethodPatch:
		return jsonBody(ref("Collection"))
	case path == "/api/v1/admin/auth/login" || path == "/api/v1/admin/setup":
		return jsonBody(ref("Credentials"))
	case strings.HasPrefix(path, "/api/v1/auth/{collection}/") && (strings.HasSuffix(path, "/login") || strings.HasSuffix(path, "/register")):
		return jsonBody(ref("Credentials"))
	case path == "/api/v1/admin/settings" && method == http.MethodPatch:
		return jsonBody(obj{"type": "object", "additionalProperties": obj{"type": "string"}})
	}
	return nil
}

// routeResponse gives the answers of the main control-plane resources.
func routeResponse(method, path string) obj {
	switch {
	case path == "/api/v1/admin/collections" && method == http.MethodGet:
		return dataOf(obj{"type": "array", "items": ref("Collection")})
	case strings.HasPrefix(path, "/api/v1/admin/collections") && !strings.Contains(path, "/indexes") && method != http.MethodDelete:
		return dataOf(ref("Collection"))
	case path == "/api/v1/admin/auth/login" || strings.HasSuffix(path, "/login") || strings.HasSuffix(path, "/register"):
		return dataOf(ref("Session"))
	case path == "/api/v1/admin/settings":
		return dataOf(obj{"type": "object", "additionalProperties": obj{"type": "string"}})
	}
	return nil
}
