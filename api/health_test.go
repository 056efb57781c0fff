package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

func TestHealthProbes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	node := s.Stack.Node.NodeID()

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "health is a bare object with the probe fields",
			URL:            "/_/health",
			ExpectedStatus: http.StatusOK,
			ExpectedHeaders: map[string]string{
				"X-Svc-Node":   node,
				"Content-Type": "application/json",
			},
			ExpectedContent:    []string{`"status":"ok"`, `"raft_state":"Leader"`},
			NotExpectedContent: []string{`"data"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				var h map[string]any
				if err := json.Unmarshal(body, &h); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"status", "worker_id", "pid", "uptime", "node_id", "raft_state"} {
					if _, ok := h[k]; !ok {
						t.Errorf("health lacks %q: %s", k, body)
					}
				}
				if h["node_id"] != node || h["worker_id"] != node {
					t.Errorf("node_id/worker_id = %v/%v, want %s", h["node_id"], h["worker_id"], node)
				}
				if pid, _ := h["pid"].(float64); pid <= 0 {
					t.Errorf("pid = %v", h["pid"])
				}
				if up, ok := h["uptime"].(float64); !ok || up < 0 {
					t.Errorf("uptime = %v", h["uptime"])
				}
			},
		},
		{
			Name:            "ready is 200 with ready true once the node has started",
			URL:             "/_/ready",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"ready":true`, `"raft":true`, `"migrated":true`, `"node_id":"` + node + `"`},
			ExpectedHeaders: map[string]string{"X-Svc-Node": node},
		},
		{
			Name:            "cluster summary for load balancers",
			URL:             "/_/cluster",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"node_id":"` + node + `"`, `"state":"Leader"`, `"leader_id":"` + node + `"`, `"healthy":true`},
			ExpectedHeaders: map[string]string{"X-Svc-Node": node},
		},
		{
			Name:            "probes need no credentials, and bad ones do not matter",
			URL:             "/_/health",
			Headers:         map[string]string{"Authorization": "Bearer garbage"},
			ExpectedStatus:  http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Node": node},
		},
		{
			Name:            "a POST to a probe is 405 with the node header",
			Method:          http.MethodPost,
			URL:             "/_/ready",
			ExpectedStatus:  http.StatusMethodNotAllowed,
			ExpectedHeaders: map[string]string{"X-Svc-Node": node},
		},
		{
			Name:            "an unknown probe is a 404 with the node header",
			URL:             "/_/nope",
			ExpectedStatus:  http.StatusNotFound,
			ExpectedHeaders: map[string]string{"X-Svc-Node": node},
		},
	})
}
