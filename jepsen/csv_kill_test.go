package jepsen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCSVImportKilledKeepsWholeChunks: a node SIGKILLed in the middle of
// a 200,000-row CSV import holds, once restarted, exactly the rows of the
// chunks it committed (a multiple of 100, the first rows of the file in
// order): no chunk is half applied and no row is applied twice when the
// log is replayed.
func TestCSVImportKilledKeepsWholeChunks(t *testing.T) {
	const rows = 200_000
	c := startCluster(t, 1)
	createCollectionAll(t, c, csvItemsCollection)
	nd := c.Nodes()[0]

	var b strings.Builder
	b.WriteString("seq,tag\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "%d,t-%d\n", i, i)
	}
	imp := c.Admin(nd)
	imp.Timeout = 5 * time.Minute
	done := make(chan error, 1)
	go func() {
		resp, err := imp.Do(context.Background(), "POST", "/api/v1/admin/import/citems", []byte(b.String()))
		if err == nil {
			err = fmt.Errorf("the import finished before the kill: %s", resp)
		}
		done <- err
	}()

	count := func(filter string) int {
		t.Helper()
		path := "/api/v1/citems?perPage=1"
		if filter != "" {
			path += "&filter=" + url.QueryEscape(filter)
		}
		resp := mustDo(t, c.Admin(nd), "GET", path, nil, http.StatusOK)
		var l struct{ TotalItems int }
		if err := resp.JSON(&l); err != nil {
			t.Fatalf("%v: %s", err, resp)
		}
		return l.TotalItems
	}
	deadline := time.Now().Add(2 * time.Minute)
	for count("") < 5_000 {
		if time.Now().After(deadline) {
			t.Fatal("the import did not reach 5,000 rows in 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Kill(t, nd.Name)
	if err := <-done; err != nil && strings.Contains(err.Error(), "finished before") {
		t.Fatal(err)
	}
	c.Restart(t, nd.Name)

	n := count("")
	if n == 0 || n == rows || n%100 != 0 {
		t.Fatalf("after the kill the node holds %d rows, want a multiple of 100 between 0 and %d", n, rows)
	}
	if first := count(fmt.Sprintf("seq <= %d", n)); first != n {
		t.Fatalf("after the kill the node holds %d rows but only %d of them are the first %d of the file", n, first, n)
	}
	t.Logf("killed mid-import: %d of %d rows, %d whole chunks", n, rows, n/100)
}
