package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"svcd/engine"
)

// rest runs call through the Backend as p and answers the body of a 2xx
// reply, or a tool error carrying the REST error envelope's message (the
// model reads why: a rule, a role, a validation detail).
func (s *Server) rest(ctx context.Context, p engine.Principal, call Call) (json.RawMessage, error) {
	rep := s.opts.Backend.Do(ctx, p, call)
	if rep.OK() {
		if len(rep.Body) == 0 {
			return json.RawMessage(`{"ok":true}`), nil
		}
		return unwrapData(rep.Body), nil
	}
	var env struct {
		Error   string         `json:"error"`
		Code    int            `json:"code"`
		Details map[string]any `json:"details"`
	}
	if json.Unmarshal(rep.Body, &env) != nil || env.Error == "" {
		return nil, toolErrorf("%s %s answered HTTP %d", call.Method, call.Path, rep.Status)
	}
	msg := fmt.Sprintf("HTTP %d: %s", rep.Status, env.Error)
	if len(env.Details) > 0 {
		d, _ := json.Marshal(env.Details)
		msg += " " + string(d)
	}
	return nil, &restError{status: rep.Status, msg: msg}
}

// restError is a tool error that remembers the REST status (resources map
// 404 to the protocol's resource-not-found).
type restError struct {
	status int
	msg    string
}

func (e *restError) Error() string { return e.msg }

// query builds a url.Values from the string-ish arguments named.
func query(args map[string]any, names ...string) url.Values {
	q := url.Values{}
	for _, n := range names {
		switch v := args[n].(type) {
		case string:
			if v != "" {
				q.Set(n, v)
			}
		case float64:
			q.Set(n, fmt.Sprint(int64(v)))
		case bool:
			q.Set(n, fmt.Sprint(v))
		}
	}
	return q
}

func argString(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// unwrapData answers v of a body {"data": v} (a record, a collection),
// and any other body (a page of records, with its counts) as it is.
func unwrapData(body json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil && len(m) == 1 && m["data"] != nil {
		return m["data"]
	}
	return body
}
