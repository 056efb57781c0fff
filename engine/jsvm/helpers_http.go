package jsvm

import (
	"fmt"
	"net/textproto"
	"strings"

	"github.com/dop251/goja"
)

// Outbound HTTP. helpers.http's requests pass the egress guard: private,
// loopback, link-local and metadata addresses are refused unless the
// settings hooks.http.deny and hooks.http.allow say otherwise (checked
// on the address dialled, redirects included). helpers.fetch is raw
// (SPEC.md): it dials anything the node can reach. Admin-authored code
// has host access either way; fetch only skips the guard's protection
// against mistakes.
//
// Both read at most maxBytes of a response (5 MiB unless the options
// say, at most 10 MiB) and throw beyond it.

func (h *helperSet) net(o *goja.Object) {
	set(o, "fetch", func(call goja.FunctionCall) goja.Value {
		url := h.str(call, 0, "helpers.fetch", "the URL")
		return h.request("helpers.fetch", h.inv.m.fetch, url, h.opts(call, 1, "helpers.fetch"))
	})
	ns := h.namespace(o, "http")
	ns.set("request", func(call goja.FunctionCall) goja.Value {
		url := h.str(call, 0, "helpers.http.request", "the URL")
		return h.request("helpers.http.request", h.inv.m.http, url, h.opts(call, 1, "helpers.http.request"))
	})
	ns.set("getJson", func(call goja.FunctionCall) goja.Value {
		url := h.str(call, 0, "helpers.http.getJson", "the URL")
		o := h.opts(call, 1, "helpers.http.getJson")
		if o == nil {
			o = map[string]any{}
		}
		o["method"] = "GET"
		return h.jsonAnswer("helpers.http.getJson", h.request("helpers.http.getJson", h.inv.m.http, url, o))
	})
	ns.set("postJson", func(call goja.FunctionCall) goja.Value {
		url := h.str(call, 0, "helpers.http.postJson", "the URL")
		data, err := h.inv.b.toGo(call.Argument(1))
		if err != nil {
			h.inv.throw("helpers.http.postJson", err)
		}
		o := h.opts(call, 2, "helpers.http.postJson")
		if o == nil {
			o = map[string]any{}
		}
		o["method"], o["json"] = "POST", data
		return h.jsonAnswer("helpers.http.postJson", h.request("helpers.http.postJson", h.inv.m.http, url, o))
	})
}

// request sends one request with c: options method (GET), headers
// (object), body (a string, sent as is), json (a value, sent as JSON),
// maxBytes. The answer is {status, ok, headers, body, json()}: header
// names in lower case, the body as text, json() its parsed JSON.
func (h *helperSet) request(name string, c HTTPClient, url string, o map[string]any) goja.Value {
	if c == nil {
		h.inv.fail("%s: outbound HTTP is not available on this node", name)
	}
	method := strings.ToUpper(optString(o, "method"))
	if method == "" {
		method = "GET"
	}
	header := map[string]string{}
	if hs, ok := o["headers"].(map[string]any); ok {
		for k, v := range hs {
			header[k] = fmt.Sprint(v)
		}
	}
	var body []byte
	switch {
	case o["json"] != nil:
		raw, err := jsonMarshal(o["json"])
		if err != nil {
			h.inv.throw(name, err)
		}
		body = raw
		if !hasHeader(header, "Content-Type") {
			header["Content-Type"] = "application/json"
		}
	case o["body"] != nil:
		s, ok := o["body"].(string)
		if !ok {
			h.inv.fail("%s: body must be a string (send a value as JSON with the json option)", name)
		}
		body = []byte(s)
	}
	limit := min(optInt(o, "maxBytes", defaultHTTPBytes), maxHTTPBytes)
	if limit <= 0 {
		limit = defaultHTTPBytes
	}
	status, rh, rb, err := c.Request(h.inv.ctx, method, url, header, body, limit)
	if err != nil {
		h.inv.throw(name, err)
	}
	h.inv.charge(name, len(rb))
	res := h.inv.rt.NewObject()
	set(res, "status", status)
	set(res, "ok", status >= 200 && status < 300)
	hdrs := map[string]any{}
	for k, v := range rh {
		if len(v) > 0 {
			hdrs[strings.ToLower(k)] = v[0]
		}
	}
	set(res, "headers", h.inv.b.fromGo(hdrs))
	text := string(rb)
	set(res, "body", text)
	set(res, "json", func(goja.FunctionCall) goja.Value {
		if strings.TrimSpace(text) == "" {
			return goja.Null()
		}
		v, err := h.inv.b.parse(goja.Undefined(), h.inv.rt.ToValue(text))
		if err != nil {
			h.inv.fail("%s: the response is not JSON", name)
		}
		return v
	})
	return res
}

// jsonAnswer is the parsed JSON of a response, or a throw for a status
// other than 2xx.
func (h *helperSet) jsonAnswer(name string, res goja.Value) goja.Value {
	o := res.ToObject(h.inv.rt)
	status := int(o.Get("status").ToInteger())
	if status < 200 || status > 299 {
		body := o.Get("body").String()
		if len(body) > 200 {
			body = body[:200] + "..."
		}
		e := h.inv.b.jsError(fmt.Sprintf("%s: status %d: %s", name, status, body), 0, nil)
		set(e, "upstreamStatus", status)
		panic(e)
	}
	fn, _ := goja.AssertFunction(o.Get("json"))
	v, err := fn(res)
	if err != nil {
		rethrow(err)
	}
	return v
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if textproto.CanonicalMIMEHeaderKey(k) == name {
			return true
		}
	}
	return false
}
