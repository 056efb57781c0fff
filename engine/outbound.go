package engine

import "context"

// Outbound performs the engine's HTTP requests to the outside (mail over
// the HTTP transport, the breached-password check). The node passes one
// that goes through its SSRF guard (api/egress); the engine never dials
// by itself.
type Outbound interface {
	Get(ctx context.Context, url string, header map[string]string) (status int, body []byte, err error)
	Post(ctx context.Context, url string, header map[string]string, body []byte) (status int, respBody []byte, err error)
}

// errNoOutbound answers a feature that needs outbound HTTP on a node
// built without it (tests that do not exercise it).
var errNoOutbound = &Error{Kind: KindUnavailable, Message: "Outbound HTTP is not available on this node"}

// outboundHTTP is the node's Outbound, or errNoOutbound.
func (e *Engine) outboundHTTP() (Outbound, error) {
	if e.outbound == nil {
		return nil, errNoOutbound
	}
	return e.outbound, nil
}
