package jepsen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// TestHistoryIdenticalOnEveryNode: record history is written by each
// node's state machine in the transaction of the change, so after writes
// through every node (creates, updates, a cascade-free delete, a batch and
// a write refused at apply time) every node answers the same history, byte
// for byte.
func TestHistoryIdenticalOnEveryNode(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, `{"name":"ledger","type":"base","history_enabled":true,
		"view_rule":"","create_rule":"","update_rule":"","delete_rule":"",
		"fields":[{"name":"label","type":"text"},{"name":"amount","type":"number","max":1000}]}`)
	nodes := c.Nodes()
	var ids []string
	var last uint64
	for i, nd := range nodes {
		resp := mustDo(t, c.Client(nd), "POST", "/api/v1/ledger", map[string]any{"label": fmt.Sprint("r", i), "amount": i}, http.StatusCreated)
		rec, err := decodeRecord(resp)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
		last = max(last, resp.Index())
	}
	for round := range 3 {
		for i, nd := range nodes {
			id := ids[(i+round)%len(ids)]
			last = max(last, mustDo(t, c.Admin(nd), "PATCH", "/api/v1/ledger/"+id, map[string]any{"amount": 10*round + i}, http.StatusOK).Index())
		}
	}
	// Refused (amount over its max): no history anywhere.
	mustDo(t, c.Client(nodes[1]), "PATCH", "/api/v1/ledger/"+ids[0], map[string]any{"amount": 5000}, http.StatusUnprocessableEntity)
	batch := map[string]any{"requests": []map[string]any{
		{"method": "PATCH", "url": "/api/v1/ledger/" + ids[1], "body": map[string]any{"label": "batched"}},
		{"method": "POST", "url": "/api/v1/ledger", "body": map[string]any{"label": "from batch"}},
	}}
	last = max(last, mustDo(t, c.Client(nodes[2]), "POST", "/api/v1/batch", batch, http.StatusOK).Index())
	last = max(last, mustDo(t, c.Client(nodes[0]), "DELETE", "/api/v1/ledger/"+ids[2], nil, http.StatusNoContent).Index())
	waitIndexAll(t, c, last)

	for _, id := range ids {
		var want []byte
		for _, nd := range nodes {
			got := mustDo(t, c.Admin(nd), "GET", "/api/v1/ledger/"+id+"/history?perPage=200", nil, http.StatusOK).Body
			if want == nil {
				want = got
				var h struct {
					Data struct {
						TotalItems int `json:"totalItems"`
					} `json:"data"`
				}
				if err := json.Unmarshal(got, &h); err != nil || h.Data.TotalItems < 3 {
					t.Fatalf("%s: history %s (%v)", nd.Name, got, err)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("history of %s differs on %s:\n%s\nvs\n%s", id, nd.Name, got, want)
			}
		}
	}
}
