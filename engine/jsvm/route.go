package jsvm

import (
	"context"
	"strings"

	"svcd/engine"
)

// Custom routes (SPEC.md "Server-side code"): code an admin serves under
// /api/v1/custom/<path>.

// AnyMethod as a route's method serves every method.
const AnyMethod = "*"

// routeMethods are the methods a route may name.
var routeMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, AnyMethod: true}

// Route is code that answers requests to /api/v1/custom/<Path>
// (CONTRACT.md's shape, with its timestamps).
type Route struct {
	ID string `json:"id"`
	// Method is GET, POST, PUT, PATCH, DELETE or "*" (any).
	Method string `json:"method"`
	// Path is stored without its leading slash; ":name" segments fill
	// params.
	Path    string `json:"path"`
	Code    string `json:"code"`
	Enabled bool   `json:"enabled"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
	pattern string
	parsed  routePath
}

type routeInput struct {
	Method  *string `json:"method"`
	Path    *string `json:"path"`
	Code    *string `json:"code"`
	Enabled *bool   `json:"enabled"`
}

// Routes lists every route by path and method.
func (m *Module) Routes() []*Route { return m.set.Load().routes }

// Route returns one route.
func (m *Module) Route(id string) (*Route, error) {
	for _, r := range m.set.Load().routes {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, errRouteNotFound
}

// CreateRoute validates the body (path, method, the code compiles) and
// stores the route; another route of the same method and path is a 409.
func (m *Module) CreateRoute(ctx context.Context, body []byte) (*Route, uint64, error) {
	var in routeInput
	if err := decodeInput(body, &in); err != nil {
		return nil, 0, err
	}
	now := m.core.Now().Unix()
	r := &Route{ID: "route_" + engine.NewID(), Method: AnyMethod, Enabled: true, Created: now, Updated: now}
	if err := m.applyRouteInput(r, in, true); err != nil {
		return nil, 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdRouteSave, routeSaveCmd{Route: *r, Pattern: r.pattern, Create: true})
	if err != nil {
		return nil, idx, err
	}
	return r, idx, nil
}

// UpdateRoute changes the members the body holds.
func (m *Module) UpdateRoute(ctx context.Context, id string, body []byte) (*Route, uint64, error) {
	old, err := m.Route(id)
	if err != nil {
		return nil, 0, err
	}
	var in routeInput
	if err := decodeInput(body, &in); err != nil {
		return nil, 0, err
	}
	r := *old
	r.Updated = max(m.core.Now().Unix(), old.Updated)
	if err := m.applyRouteInput(&r, in, false); err != nil {
		return nil, 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdRouteSave, routeSaveCmd{Route: r, Pattern: r.pattern})
	if err != nil {
		return nil, idx, err
	}
	return &r, idx, nil
}

// DeleteRoute removes a route.
func (m *Module) DeleteRoute(ctx context.Context, id string) (uint64, error) {
	if _, err := m.Route(id); err != nil {
		return 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdRouteDelete, deleteCmd{ID: id})
	return idx, err
}

func (m *Module) applyRouteInput(r *Route, in routeInput, create bool) error {
	d := map[string]any{}
	if in.Method != nil {
		r.Method = strings.ToUpper(strings.TrimSpace(*in.Method))
	}
	if in.Path != nil {
		r.Path = *in.Path
	}
	if in.Code != nil {
		r.Code = *in.Code
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
	}
	if !routeMethods[r.Method] {
		d["method"] = `must be GET, POST, PUT, PATCH, DELETE or "*" (any method)`
	}
	parsed, norm, pattern, msg := parsePath(r.Path)
	if msg != "" {
		d["path"] = msg
	}
	r.Path, r.pattern, r.parsed = norm, pattern, parsed
	if create || in.Code != nil {
		m.checkCode(r.Code, d)
	}
	if len(d) > 0 {
		return &engine.Error{Kind: engine.KindValidation, Message: "Validation failed", Details: d}
	}
	return nil
}
