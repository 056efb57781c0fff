package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

func TestMetricsSnapshot(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)
	const url = "/api/v1/_/metrics"
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "anonymous is 401",
			URL:            url,
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "a garbage token is 401",
			URL:            url,
			Headers:        map[string]string{"Authorization": "Bearer nope"},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "writes are 405",
			Method:         http.MethodPost,
			URL:            url,
			Admin:          true,
			ExpectedStatus: http.StatusMethodNotAllowed,
		},
		{
			Name:            "the admin snapshot has the process and state machine figures",
			URL:             url,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"raft_state":"Leader"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				m := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				for _, k := range []string{
					"pid", "process_cpu_seconds", "fsm_batches_total", "fsm_commands_total",
					"fsm_applied_index", "raft_commit_index", "raft_applied_index", "raft_last_index", "raft_term",
				} {
					if _, ok := m[k]; !ok {
						t.Errorf("metrics lack %q: %s", k, body)
					}
				}
				// Setup and migration went through the log already.
				if apitest.Int(t, m["fsm_commands_total"]) < 2 || apitest.Int(t, m["fsm_batches_total"]) < 1 {
					t.Errorf("fsm counters: %v / %v", m["fsm_commands_total"], m["fsm_batches_total"])
				}
				if apitest.Int(t, m["pid"]) <= 0 {
					t.Errorf("pid = %v", m["pid"])
				}
			},
		},
		{
			Name: "the counters grow with writes",
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				before := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, url, nil)["data"])
				s.CreateCollection(t, coll("things", "base", nil))
				after := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, url, nil)["data"])
				if apitest.Int(t, after["fsm_commands_total"]) <= apitest.Int(t, before["fsm_commands_total"]) {
					t.Errorf("fsm_commands_total did not grow: %v -> %v", before["fsm_commands_total"], after["fsm_commands_total"])
				}
			},
			URL:            url,
			Admin:          true,
			ExpectedStatus: http.StatusOK,
		},
	})
}
