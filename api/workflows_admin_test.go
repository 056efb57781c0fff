package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestWorkflowsAdmin: the definitions' routes (create, list, read,
// change, delete), the 422s of a bad name or code (line and column named),
// and who may use them (developer and above).
func TestWorkflowsAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tokens := map[string]string{}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tokens[role] = newAdmin(t, s, role+"@example.com", role)
	}
	const code = "return input"
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "create", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "hello", "code": code}, ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{`"name":"hello"`, `"code":"return input"`, `"created":`, `"updated":`},
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "a taken name", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "hello", "code": code}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"name":"a workflow with this name already exists"`}},
		{Name: "a bad name", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "no spaces", "code": code}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"name":"must match`}},
		{Name: "a reserved name", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "runs", "code": code}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"name":"is reserved"`}},
		{Name: "no code", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "x"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"is required"`}},
		{Name: "code that does not compile: line and column", Method: http.MethodPost, URL: workflowsURL, Admin: true,
			Body: map[string]any{"name": "broken", "code": "const a = 1;\nconst b = ;"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"line 2, column 11: Unexpected token ;"`}},
		{Name: "list", URL: workflowsURL, Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`{"data":[{"name":"hello","code":"return input",`}, NotExpectedContent: []string{"broken"}},
		{Name: "read", URL: workflowsURL + "/hello", Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"name":"hello"`}},
		{Name: "read a missing one", URL: workflowsURL + "/nope", Admin: true, ExpectedStatus: http.StatusNotFound},
		{Name: "change the code", Method: http.MethodPatch, URL: workflowsURL + "/hello", Admin: true,
			Body: map[string]any{"code": "return 2"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"code":"return 2"`}},
		{Name: "a change that does not compile", Method: http.MethodPatch, URL: workflowsURL + "/hello", Admin: true,
			Body: map[string]any{"code": "return ("}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"code":"line 1, column`}},
		{Name: "a rename", Method: http.MethodPatch, URL: workflowsURL + "/hello", Admin: true,
			Body: map[string]any{"name": "other", "code": "return 2"}, ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "change a missing one", Method: http.MethodPatch, URL: workflowsURL + "/nope", Admin: true,
			Body: map[string]any{"code": "return 2"}, ExpectedStatus: http.StatusNotFound},
		{Name: "start a missing one", Method: http.MethodPost, URL: workflowsURL + "/nope/start", Admin: true,
			ExpectedStatus: http.StatusNotFound},
		{Name: "runs of a missing one", URL: workflowsURL + "/nope/runs", Admin: true, ExpectedStatus: http.StatusNotFound},
		{Name: "runs in a state that does not exist", URL: workflowsURL + "/hello/runs?state=done", Admin: true,
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"state":`}},
		{Name: "a missing run", URL: workflowsURL + "/runs/nope", Admin: true, ExpectedStatus: http.StatusNotFound},
		{Name: "retry a missing run", Method: http.MethodPost, URL: workflowsURL + "/runs/nope/retry", Admin: true,
			ExpectedStatus: http.StatusNotFound},
		{Name: "emit without an event name", Method: http.MethodPost, URL: workflowsURL + "/events", Admin: true,
			Body: map[string]any{"payload": 1}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"event":"is required"`}},
		{Name: "an editor may not read workflows", URL: workflowsURL, Headers: bearer(tokens["editor"]),
			ExpectedStatus: http.StatusForbidden, ExpectedContent: []string{"Your admin role does not allow this action"}},
		{Name: "a viewer may not start one", Method: http.MethodPost, URL: workflowsURL + "/hello/start", Headers: bearer(tokens["viewer"]),
			ExpectedStatus: http.StatusForbidden},
		{Name: "an editor may not emit", Method: http.MethodPost, URL: workflowsURL + "/events", Headers: bearer(tokens["editor"]),
			Body: map[string]any{"event": "e"}, ExpectedStatus: http.StatusForbidden},
		{Name: "a developer may create", Method: http.MethodPost, URL: workflowsURL, Headers: bearer(tokens["developer"]),
			Body: map[string]any{"name": "dev", "code": code}, ExpectedStatus: http.StatusCreated},
		{Name: "and read runs", URL: workflowsURL + "/dev/runs", Headers: bearer(tokens["developer"]),
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`, `"totalItems":0`}},
		{Name: "delete", Method: http.MethodDelete, URL: workflowsURL + "/dev", Headers: bearer(tokens["developer"]),
			ExpectedStatus: http.StatusNoContent},
		{Name: "delete a missing one", Method: http.MethodDelete, URL: workflowsURL + "/dev", Admin: true,
			ExpectedStatus: http.StatusNotFound},
		{Name: "the audit log names the actions", URL: "/api/v1/admin/audit-log?perPage=200", Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"action":"workflows.create"`, `"action":"workflows.update"`, `"action":"workflows.delete"`,
				`"action":"workflows.start","target":"nope"`, `"action":"workflows.retry","target":"nope"`, `"action":"workflows.emit"`}},
	})
}
