package main

import (
	"fmt"
	"net/url"
	"strings"
)

// targets are the nodes the workers send their requests to. Without spread
// each client keeps to one node (client i to node i mod n), as behind a
// load balancer with keep-alive connections; with spread each client takes
// the nodes in turn, request by request, starting at its own offset.
type targets struct {
	bases  []string // base URLs, no trailing slash
	spread bool
}

// newTargets checks and normalizes a list of base URLs.
func newTargets(urls []string, spread bool) (targets, error) {
	t := targets{spread: spread}
	for _, u := range urls {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return t, fmt.Errorf("bad node URL %q (want http://host:port)", u)
		}
		t.bases = append(t.bases, u)
	}
	if len(t.bases) == 0 {
		return t, fmt.Errorf("no node URL")
	}
	return t, nil
}

// pick returns the index of the node that gets w's next request.
func (t targets) pick(w *worker) int {
	if !t.spread {
		return w.id % len(t.bases)
	}
	i := (w.id + w.turn) % len(t.bases)
	w.turn++
	return i
}

// describe names the targets for progress lines.
func (t targets) describe() string {
	switch {
	case len(t.bases) == 1:
		return t.bases[0]
	case t.spread:
		return fmt.Sprintf("%d nodes, spread per request", len(t.bases))
	}
	return fmt.Sprintf("%d nodes, one per client", len(t.bases))
}
