package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestLogsNodeAll: ?node=all gathers every member's lines, each tagged
// with its node, newest first; with one member stopped the others' lines
// are answered and the stopped one is listed in failed. A request that
// is itself a gathering node's (X-Svc-Logs-Fanout) answers for its node
// only. Search gathers the same way.
func TestLogsNodeAll(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	tok := c.AdminToken(t)
	for _, id := range []string{"node1", "node2", "node3"} {
		if res, _ := c.Node(id).Do(t, "GET", "/api/v1/admin/collections/fanout-marker-"+id, nil, bearer(tok)); res.StatusCode != http.StatusNotFound {
			t.Fatalf("marker on %s: %d", id, res.StatusCode)
		}
	}
	n1 := c.Node("node1")
	markers := func(p logPage) map[string]string {
		out := map[string]string{}
		for _, l := range p.Data {
			path, _ := l["path"].(string)
			if i := strings.Index(path, "fanout-marker-"); i >= 0 && !strings.Contains(path, "?") {
				out[path[i+len("fanout-marker-"):]] = l["node"].(string)
			}
		}
		return out
	}
	// All three answer.
	p := readLogPage(t, must(t, n1, "GET", "/api/v1/admin/logs?node=all&q=fanout-marker&perPage=50", bearer(tok)))
	newestFirst(t, p)
	if got := markers(p); len(got) != 3 || got["node1"] != "node1" || got["node2"] != "node2" || got["node3"] != "node3" {
		t.Errorf("gathered markers by node: %v (%+v)", got, p)
	}
	slices.Sort(p.Nodes)
	if !slices.Equal(p.Nodes, []string{"node1", "node2", "node3"}) || len(p.Failed) != 0 || p.TotalItems != 3 {
		t.Errorf("nodes %v, failed %v, total %d", p.Nodes, p.Failed, p.TotalItems)
	}
	// A gathering node's request is answered for that node alone.
	h := bearer(tok)
	h["X-Svc-Logs-Fanout"] = "1"
	p = readLogPage(t, must(t, c.Node("node2"), "GET", "/api/v1/admin/logs?node=all&q=fanout-marker", h))
	if got := markers(p); len(got) != 1 || got["node2"] != "node2" || p.Nodes != nil {
		t.Errorf("a fan-out target gathered again: %v %+v", got, p)
	}

	c.Node("node3").Stop()
	p = readLogPage(t, must(t, n1, "GET", "/api/v1/admin/logs?node=all&q=fanout-marker", bearer(tok)))
	if got := markers(p); len(got) != 2 || got["node1"] != "node1" || got["node2"] != "node2" {
		t.Errorf("markers with node3 stopped: %v", got)
	}
	if len(p.Failed) != 1 || p.Failed[0].Node != "node3" || p.Failed[0].Error == "" || len(p.Nodes) != 2 {
		t.Errorf("node3 stopped: nodes %v, failed %+v", p.Nodes, p.Failed)
	}
	res, body := n1.Do(t, "POST", "/api/v1/admin/logs/search?node=all", map[string]any{"query": `$[?@.status == 404 && match(@.path, ".*fanout-marker-node[12]")]`}, bearer(tok))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("search node=all: %d %s", res.StatusCode, body)
	}
	p = readLogPage(t, body)
	if got := markers(p); len(got) != 2 || len(p.Failed) != 1 || p.Failed[0].Node != "node3" {
		t.Errorf("search node=all with node3 stopped: %v %+v", got, p)
	}
	// Too deep a gathered page.
	res, body = n1.Do(t, "GET", "/api/v1/admin/logs?node=all&perPage=500&page=11", nil, bearer(tok))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "5000") {
		t.Errorf("page 11 of 500 with node=all: %d %s", res.StatusCode, body)
	}
}
