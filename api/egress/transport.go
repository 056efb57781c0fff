package egress

import (
	"net"
	"net/http"
	"time"
)

// NewTransport is an HTTP transport of its own (its own pool of
// connections) whose every dial passes the guard, for a client that needs
// other policies than Client's: webhook deliveries keep up to
// maxIdlePerHost idle connections to each receiver and follow no
// redirect.
func (g *Guard) NewTransport(maxIdlePerHost int) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	return &http.Transport{
		DialContext:         d.DialContext,
		Proxy:               nil, // a proxy would dial for us, unchecked
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConns:        4 * maxIdlePerHost,
		MaxIdleConnsPerHost: maxIdlePerHost,
		IdleConnTimeout:     30 * time.Second,
	}
}
