package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardClusterOpsBrowser runs the cluster page's operations in
// headless Chromium on a three-node cluster: take a snapshot, add a fourth
// node (started detached) as a non-voter and see it catch up as a replica,
// then remove it; each through its confirmation, each checked against the
// cluster's own answer.
func TestDashboardClusterOpsBrowser(t *testing.T) {
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t) // creates the first admin
	page := c.Nodes[0]
	p := openDashboard(t, page.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/members")
	p.waitFor("three live members", `document.querySelectorAll("#members tr[data-member][data-status=alive]").length === 3`, 20*time.Second)
	p.checkNamed("cluster operations")

	// A snapshot of the page's node.
	p.press("Take snapshot")
	p.press("Confirm snapshot")
	p.waitFor("the snapshot's answer", `document.getElementById("cluster-outcome").textContent.startsWith("Snapshot taken at index ")`, 20*time.Second)

	// A fourth node, running but in no cluster, added as a non-voter.
	extra := c.StartDetached(t, "node4")
	p.fill("input[name=member_id]", "node4")
	p.fill("input[name=member_raft_addr]", extra.RaftAddr)
	p.press("Add member")
	p.press("Confirm add")
	p.waitFor("the add's answer", `document.getElementById("cluster-outcome").textContent === "Added node4 (non-voter)."`, 20*time.Second)
	c.WaitReady(t, extra)
	p.waitFor("node4 as a replica", `document.querySelector("#members tr[data-member=node4]") && document.querySelector("#members tr[data-member=node4]").children[1].textContent === "replica"`, 20*time.Second)
	p.shot("dashboard-cluster-ops")
	members := func() string {
		body := apitest.Obj(t, page.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/cluster", nil)["data"])
		var out []string
		for _, m := range body["members"].([]any) {
			mm := apitest.Obj(t, m)
			out = append(out, mm["id"].(string)+":"+mm["suffrage"].(string))
		}
		return strings.Join(out, ",")
	}
	if got := members(); !strings.Contains(got, "node4:nonvoter") {
		t.Fatalf("members after the add = %s, want node4 as a non-voter", got)
	}

	// Removed again.
	p.choose("select[name=remove_member]", "node4")
	p.press("Remove member")
	p.press("Confirm remove")
	p.waitFor("the remove's answer", `document.getElementById("cluster-outcome").textContent === "Removed node4."`, 20*time.Second)
	p.waitFor("node4 gone from the table", `!document.querySelector("#members tr[data-member=node4]")`, 20*time.Second)
	if got := members(); strings.Contains(got, "node4") {
		t.Fatalf("members after the remove = %s", got)
	}
	p.checkNamed("cluster after the operations")
}
