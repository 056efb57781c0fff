package jepsen_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/jepsen/harness"
)

const batchItemsCollection = `{"name":"bitems","type":"base","fields":[` +
	`{"name":"seq","type":"number","required":true},{"name":"tag","type":"text","unique":true}],` +
	`"view_rule":"","create_rule":"","update_rule":"","delete_rule":""}`

// TestClusterBatchAllOrNothing: a batch sent through a follower is one log
// command. A successful one is visible whole on all three nodes with strong
// reads; one whose entry 57 fails at apply time (a unique value) leaves
// nothing on any node, and every node reached the same digest.
func TestClusterBatchAllOrNothing(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, batchItemsCollection)
	fols := c.Followers()
	if len(fols) != 2 {
		t.Fatalf("%d followers", len(fols))
	}
	ctx := context.Background()

	// A successful batch through follower 0: 60 creates, an update of one
	// of them and a read of it.
	var entries []map[string]any
	for i := range 60 {
		entries = append(entries, map[string]any{"method": "POST", "url": "/api/v1/bitems",
			"body": map[string]any{"id": fmt.Sprintf("okbatch%08d", i), "seq": i + 1, "tag": fmt.Sprintf("ok-%d", i)}})
	}
	entries = append(entries,
		map[string]any{"method": "PATCH", "url": "/api/v1/bitems/okbatch00000007", "body": map[string]any{"seq": 700}},
		map[string]any{"method": "GET", "url": "/api/collections/bitems/records/okbatch00000007"})
	resp := mustDo(t, c.Admin(fols[0]), "POST", "/api/v1/batch", map[string]any{"requests": entries}, http.StatusOK)
	var ok struct {
		Data []struct {
			Status int            `json:"status"`
			Body   map[string]any `json:"body"`
		} `json:"data"`
	}
	if err := resp.JSON(&ok); err != nil || len(ok.Data) != 62 {
		t.Fatalf("batch answer: %v %s", err, resp)
	}
	if got := ok.Data[61].Body["seq"]; got != 700.0 || ok.Data[61].Status != 200 || ok.Data[0].Status != 201 {
		t.Errorf("read inside the batch saw seq %v (statuses %d, %d)", got, ok.Data[61].Status, ok.Data[0].Status)
	}
	for _, nd := range c.Nodes() {
		if n := strongCount(t, c, nd, ""); n != 60 {
			t.Errorf("%s: %d records after the batch, want 60", nd.Name, n)
		}
		if n := strongCount(t, c, nd, "seq=700"); n != 1 {
			t.Errorf("%s: the batch's update is not there (%d records with seq 700)", nd.Name, n)
		}
	}

	// A failing batch through follower 1: 100 entries, entry 57 collides
	// with a unique tag at apply time.
	entries = nil
	for i := range 100 {
		tag := fmt.Sprintf("bad-%d", i)
		if i == 57 {
			tag = "ok-3"
		}
		entries = append(entries, map[string]any{"method": "POST", "url": "/api/collections/bitems/records",
			"body": map[string]any{"seq": 1000 + i, "tag": tag}})
	}
	entries[10] = map[string]any{"method": "DELETE", "url": "/api/v1/bitems/okbatch00000001"}
	resp, err := c.Admin(fols[1]).Do(ctx, "POST", "/api/v1/batch", map[string]any{"requests": entries})
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.APIError(); resp.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(e.Error, "batch failed at request 57: ") || e.Details["tag"] == nil {
		t.Fatalf("failing batch: %s", resp)
	}
	if resp.Index() == 0 {
		t.Errorf("the failing batch has no X-Svc-Index: it did not reach the log")
	}
	for _, nd := range c.Nodes() {
		if n := strongCount(t, c, nd, ""); n != 60 {
			t.Errorf("%s: %d records after the failed batch, want 60", nd.Name, n)
		}
		if n := strongCount(t, c, nd, "seq>=1000"); n != 0 {
			t.Errorf("%s: %d records of the failed batch survived", nd.Name, n)
		}
		if n := strongCount(t, c, nd, "id='okbatch00000001'"); n != 1 {
			t.Errorf("%s: the failed batch's delete survived", nd.Name)
		}
	}
	if _, err := c.Converge(convergeTimeout); err != nil {
		t.Error(err)
	}
}

// strongCount is totalItems of a strong read of bitems on nd, filtered.
func strongCount(t *testing.T, c *harness.Cluster, nd *harness.Node, filter string) int {
	t.Helper()
	path := "/api/v1/bitems?perPage=1"
	if filter != "" {
		path += "&filter=" + strings.NewReplacer("=", "%3D", ">", "%3E", "'", "%27").Replace(filter)
	}
	resp := mustDo(t, c.Admin(nd).Strong(), "GET", path, nil, http.StatusOK)
	var l struct {
		TotalItems int `json:"totalItems"`
	}
	if err := resp.JSON(&l); err != nil {
		t.Fatalf("%s: %v in %s", nd.Name, err, resp)
	}
	return l.TotalItems
}
