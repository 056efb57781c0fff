package jsvm

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"

	"svcd/engine"
)

// A custom route's request body and response headers.

// maxFormValues bounds the plain values of a multipart body.
const maxFormValues = 1 << 20

// parseBody is ctx.body: JSON parsed (numbers exact), a form's fields
// (a name sent once is a string, more often an array of strings; a
// multipart form's files are left out), any other type as text, nil
// when there is none.
func parseBody(contentType string, body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		v, err := decodeJSON(body)
		if err != nil {
			return nil, engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
		}
		return v, nil
	case mt == "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, engine.Errorf(engine.KindBadRequest, "Invalid form body: %v", err)
		}
		return formObject(q), nil
	case mt == "multipart/form-data":
		return multipartObject(body, params["boundary"])
	}
	return string(body), nil
}

// formObject is a form's fields as an object.
func formObject(q map[string][]string) map[string]any {
	out := make(map[string]any, len(q))
	for k, vs := range q {
		if len(vs) == 1 {
			out[k] = vs[0]
			continue
		}
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		out[k] = arr
	}
	return out
}

// multipartObject reads the plain fields of a multipart body.
func multipartObject(body []byte, boundary string) (any, error) {
	if boundary == "" {
		return nil, engine.Errorf(engine.KindBadRequest, "Invalid multipart body: no boundary")
	}
	rd := multipart.NewReader(bytes.NewReader(body), boundary)
	q := map[string][]string{}
	budget := maxFormValues
	for {
		p, err := rd.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, engine.Errorf(engine.KindBadRequest, "Invalid multipart body: %v", err)
		}
		if p.FileName() != "" {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p, int64(budget)+1))
		if err != nil {
			return nil, engine.Errorf(engine.KindBadRequest, "Invalid multipart body: %v", err)
		}
		if budget -= len(b); budget < 0 {
			return nil, engine.Errorf(engine.KindTooLarge, "The form's values are too large")
		}
		q[p.FormName()] = append(q[p.FormName()], string(b))
	}
	return formObject(q), nil
}

// reservedResponseHeader reports a header code may not set: framing and
// connection headers, the ones the server owns (Content-Type, the
// X-Svc-* headers, CORS, Date, Server), and caching and security
// policies the node sets itself.
func reservedResponseHeader(name string) bool {
	switch strings.ToLower(name) {
	case "content-length", "content-type", "content-encoding", "transfer-encoding", "connection", "keep-alive",
		"proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer", "upgrade", "host",
		"date", "server", "www-authenticate", "strict-transport-security", "retry-after":
		return true
	}
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "x-svc-") || strings.HasPrefix(l, "access-control-")
}

// responseHeaders are the headers of set.headers the response carries:
// names that are HTTP tokens and not reserved, values of one line, and
// no Set-Cookie for the node's own session cookies (svc_*).
func responseHeaders(in map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if !validHeaderName(k) || reservedResponseHeader(k) {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case nil:
			continue
		default:
			raw, err := jsonMarshal(x)
			if err != nil {
				continue
			}
			s = strings.Trim(string(raw), `"`)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			continue
		}
		name := textproto.CanonicalMIMEHeaderKey(k)
		if name == "Set-Cookie" && strings.HasPrefix(strings.TrimSpace(strings.ToLower(s)), "svc_") {
			continue
		}
		out[name] = s
	}
	return out
}

// validHeaderName reports an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 127 || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}
