package jepsen_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const csvItemsCollection = `{"name":"citems","type":"base","fields":[` +
	`{"name":"seq","type":"number","required":true},{"name":"tag","type":"text","unique":true}],` +
	`"view_rule":"","create_rule":"","update_rule":"","delete_rule":""}`

// TestClusterCSVImport: a CSV import sent to a follower is forwarded chunk
// by chunk to the leader (250 rows, three log commands). A row that clashes
// at apply time with another row of its chunk fails alone, reported across
// the forwarding with its row number; every node holds the same records,
// an export through the other follower lists them, and the replicas
// converge to one digest.
func TestClusterCSVImport(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, csvItemsCollection)
	fols := c.Followers()
	if len(fols) != 2 {
		t.Fatalf("%d followers", len(fols))
	}
	var b strings.Builder
	b.WriteString("seq,tag\n")
	for i := range 250 {
		switch i {
		case 120: // row 122: same tag as row 121, in the same chunk
			b.WriteString("120,t-119\n")
		case 200: // row 202: refused before the log
			b.WriteString("x,t-200\n")
		default:
			fmt.Fprintf(&b, "%d,t-%d\n", i+1, i) // seq is required: 0 is blank
		}
	}
	resp := mustDo(t, c.Admin(fols[0]), "POST", "/api/v1/admin/import/citems", []byte(b.String()), http.StatusOK)
	var out struct {
		Data struct {
			Created, Failed, Total int
			Errors                 []struct {
				Row     int
				Details map[string]any
			}
		}
	}
	if err := resp.JSON(&out); err != nil {
		t.Fatalf("%v: %s", err, resp)
	}
	d := out.Data
	if d.Created != 248 || d.Failed != 2 || d.Total != 250 || len(d.Errors) != 2 ||
		d.Errors[0].Row != 122 || d.Errors[0].Details["tag"] == nil || d.Errors[1].Row != 202 || d.Errors[1].Details["seq"] == nil {
		t.Fatalf("import answer: %s", resp)
	}
	if resp.Index() == 0 {
		t.Errorf("the import has no X-Svc-Index")
	}
	for _, nd := range c.Nodes() {
		resp := mustDo(t, c.Admin(nd).Strong(), "GET", "/api/v1/citems?perPage=1", nil, http.StatusOK)
		var l struct{ TotalItems int }
		if err := resp.JSON(&l); err != nil || l.TotalItems != 248 {
			t.Errorf("%s: %d records (%v), want 248", nd.Name, l.TotalItems, err)
		}
	}
	resp = mustDo(t, c.Admin(fols[1]).Strong(), "GET", "/api/v1/admin/export/citems", nil, http.StatusOK)
	rows, err := csv.NewReader(bytes.NewReader(resp.Body)).ReadAll()
	if err != nil || len(rows) != 249 || strings.Join(rows[0], ",") != "id,created,updated,seq,tag" {
		t.Fatalf("export through a follower: %d rows, %v: %s", len(rows), err, resp)
	}
	if _, err := c.Converge(convergeTimeout); err != nil {
		t.Error(err)
	}
}
