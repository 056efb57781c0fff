package api_test

import (
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardClusterBrowser opens the cluster page of a three-node
// cluster in headless Chromium: it shows three live members and the
// leader; a member that is stopped is marked dead by the page's polling;
// leadership handed over through the page's confirmation moves.
func TestDashboardClusterBrowser(t *testing.T) {
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t) // creates the first admin
	page := c.Nodes[0]
	p := openDashboard(t, page.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/members")
	p.waitFor("three live members", `document.querySelectorAll("#members tr[data-member][data-status=alive]").length === 3`, 20*time.Second)
	leader := c.Leader(t)
	leaderID := leader.Stack.Node.NodeID()
	p.waitFor("the leader marked", `document.querySelector("#members tr[data-member=`+leaderID+`]").children[1].textContent === "leader"`, 10*time.Second)
	p.checkNamed("cluster")

	// Stop a member that is neither the page's node nor the leader; the
	// third node ("other") stays up to take leadership.
	var victim, other *apitest.Server
	for _, n := range c.Nodes[1:] {
		if n != leader && victim == nil {
			victim = n
		}
	}
	for _, n := range c.Nodes {
		if n != victim && n != leader {
			other = n
		}
	}
	victimID := victim.Stack.Node.NodeID()
	victim.Stop()
	p.waitFor(victimID+" marked dead", `document.querySelector("#members tr[data-member=`+victimID+`]").dataset.status === "dead"`, 45*time.Second)
	p.shot("dashboard-cluster-dead")

	// Hand leadership to the other live voter, through the confirmation.
	target := leaderID
	if other != nil {
		target = other.Stack.Node.NodeID()
	}
	if target == leaderID {
		t.Fatalf("no live voter besides the leader %s", leaderID)
	}
	p.waitFor("the transfer control", `document.querySelector("select[name=transfer_to]") && document.querySelector("select[name=transfer_to]").textContent === "`+target+`"`, 10*time.Second)
	p.press("Transfer leadership")
	p.press("Confirm transfer")
	p.waitFor("the new leader announced", `document.body.innerText.includes("Leadership moved to `+target+`")`, 20*time.Second)
	p.waitFor("the new leader marked", `document.querySelector("#members tr[data-member=`+target+`]").children[1].textContent === "leader"`, 10*time.Second)
	body := apitest.Obj(t, page.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/cluster", nil)["data"])
	if body["leader_id"] != target {
		t.Fatalf("leader after the transfer = %v, want %s", body["leader_id"], target)
	}
}
