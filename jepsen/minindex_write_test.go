package jepsen_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestMinIndexOnWrites: an update sent to another node right after the
// create, carrying the create's X-Svc-Index as X-Svc-Min-Index, finds the
// record every time (the header holds writes back too, not only reads).
func TestMinIndexOnWrites(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, itemsCollection)
	nodes := c.Nodes()
	for i := range 40 {
		from, to := nodes[i%3], nodes[(i+1)%3]
		created := mustDo(t, c.Client(from), "POST", "/api/v1/items", map[string]any{"seq": i + 1}, http.StatusCreated)
		var rec struct{ Data struct{ ID string } }
		created.JSON(&rec)
		mustDo(t, c.Admin(to).MinIndex(created.Index()), "PATCH", "/api/v1/items/"+rec.Data.ID,
			map[string]any{"writer": fmt.Sprint("via ", to.Name)}, http.StatusOK)
	}
}
