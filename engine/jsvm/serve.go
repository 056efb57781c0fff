package jsvm

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/dop251/goja"

	"svcd/engine"
)

// Serving custom routes. The HTTP layer authenticates the caller,
// applies the rate limits and hands the request over; the route's code
// answers. ctx holds params (the path's :name segments), query (each
// parameter's first value), body (the parsed JSON, the form's fields,
// or the text; null when empty), auth (the caller, null when anonymous),
// set ({status, headers}), helpers, and ctx.method, ctx.path and
// ctx.headers (names in lower case, first values; Authorization and
// Cookie left out).
//
// The code's return value is the JSON response body, sent as it is (not
// wrapped in data); returning nothing answers 204 unless set.status says
// otherwise. helpers.abort(msg) answers 422 (or the 4xx it names) in
// the error envelope; an error a helper threw, uncaught, answers that
// helper's status; any other throw, and code that runs past its budget,
// answers 500 with the message; the details name the route.

// RouteRequest is one request to /api/v1/custom/<Path>.
type RouteRequest struct {
	Method string
	// Path is what follows /api/v1/custom/.
	Path   string
	Query  map[string][]string
	Header map[string][]string
	// Body and ContentType are the request's body and its type.
	Body        []byte
	ContentType string
	// Caller is the authenticated caller (ctx.auth); Principal is whom
	// the helpers act as (the caller as the record routes see it).
	Caller, Principal engine.Principal
}

// RouteResponse is the route's answer.
type RouteResponse struct {
	Status int
	// Header holds the headers the code set, reserved ones removed.
	Header map[string]string
	// Body is the JSON body; nil: none.
	Body []byte
	// Route is the id of the route that answered.
	Route string
}

// ServeRoute runs the route matching req. No route: 404; a body that
// does not parse as its type says: 400.
func (m *Module) ServeRoute(ctx context.Context, req RouteRequest) (*RouteResponse, error) {
	segs := strings.Split(strings.Trim(req.Path, "/"), "/")
	method := strings.ToUpper(req.Method)
	if method == "HEAD" {
		method = "GET"
	}
	r, params := m.set.Load().route(method, segs)
	if r == nil {
		return nil, errNoRoute
	}
	body, err := parseBody(req.ContentType, req.Body)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	defer m.logRun("route", r.ID, started)
	var setObj *goja.Object
	resp := &RouteResponse{Route: r.ID}
	_, err = m.run(ctx, runSpec{
		kind: "route", id: r.ID, code: r.Code, p: req.Principal,
		vars: func(inv *invocation) map[string]any {
			setObj = inv.rt.NewObject()
			set(setObj, "status", 200)
			set(setObj, "headers", inv.rt.NewObject())
			return map[string]any{
				"params":  inv.b.fromGo(params),
				"query":   inv.b.fromGo(firstValues(req.Query, nil)),
				"body":    inv.b.fromGo(body),
				"auth":    inv.b.fromGo(nilMap(authValue(req.Caller))),
				"set":     setObj,
				"method":  req.Method,
				"path":    strings.Trim(req.Path, "/"),
				"headers": inv.b.fromGo(firstValues(req.Header, hiddenRequestHeader)),
			}
		},
		finish: func(inv *invocation, v goja.Value) (any, error) {
			return nil, m.readAnswer(inv, setObj, v, resp)
		},
	})
	if err != nil {
		return nil, routeError(r, err)
	}
	return resp, nil
}

// readAnswer fills resp from what the code left in set and returned.
func (m *Module) readAnswer(inv *invocation, setObj *goja.Object, v goja.Value, resp *RouteResponse) error {
	explicit := false
	resp.Status = 200
	if sv := setObj.Get("status"); sv != nil && !goja.IsUndefined(sv) {
		n, ok := sv.Export().(int64)
		if !ok || n < 200 || n > 599 {
			return errors.New("set.status must be an integer from 200 to 599")
		}
		resp.Status, explicit = int(n), n != 200
	}
	headers, err := inv.b.toObject(setObj.Get("headers"), "set.headers")
	if err != nil {
		return err
	}
	resp.Header = responseHeaders(headers)
	if v == nil || goja.IsUndefined(v) {
		if !explicit {
			resp.Status = 204
		}
		return nil
	}
	raw, ok, err := inv.b.toJSON(v)
	if err != nil {
		return err
	}
	if ok {
		resp.Body = raw
	}
	return nil
}

// routeError is a route's failure as its answer.
func routeError(r *Route, err error) error {
	details := map[string]any{"route": r.ID}
	var te *ThrowError
	switch {
	case errors.As(err, &te):
		status, d := thrownStatus(te)
		for k, v := range d {
			if k != "route" {
				details[k] = v
			}
		}
		kind := engine.KindInternal
		if te.Abort {
			kind = engine.KindValidation
		}
		if k, ok := statusKind(status); ok && status >= 400 {
			kind = k
		}
		return &engine.Error{Kind: kind, Message: te.Message, Details: details}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &engine.Error{Kind: engine.KindInternal, Message: "route " + r.ID + ": " + err.Error(), Details: details}
}

// firstValues is each name's first value (names lower-cased when skip is
// set, and those skip reports left out).
func firstValues(in map[string][]string, skip func(string) bool) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if len(v) == 0 {
			continue
		}
		if skip != nil {
			k = strings.ToLower(k)
			if skip(k) {
				continue
			}
		}
		out[k] = v[0]
	}
	return out
}

// hiddenRequestHeader: credentials stay out of ctx.headers (auth says
// who is calling).
func hiddenRequestHeader(k string) bool {
	return k == "authorization" || k == "cookie" || k == "x-setup-key"
}
