package api_test

import (
	"testing"

	"svcd/api/apitest"
)

// TestPasskeysCluster: on three nodes, every ceremony begins on one node
// and ends on another, right away (the verify step waits for the leader's
// commit index, so the ticket is there); a ticket is spent on every node
// once used on one, and only one of verifies racing on all three wins;
// the sign counter is the cluster's.
func TestPasskeysCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	leader := c.Leader(t)
	fl := c.Followers(t)
	a, b := fl[0], fl[1]
	data(t, a, 200, "PATCH", settingsURL, acmeSettings(), admin)
	data(t, b, 201, "POST", collectionsURL, members(), admin)
	c.Sync(t)
	register(t, a, "members", "ann@example.com", userPassword)
	ann := signIn(t, a, "members", "ann@example.com", userPassword)["token"].(string)
	c.Sync(t)

	dev := newPasskeyDevice(acmeRP())
	dev.cred.Counter = 1
	pk := dev.enroll(t, a, b, "members", ann, "Laptop")
	c.Sync(t) // the list reads the node's replica
	for _, s := range []*apitest.Server{leader, a, b} {
		if l := pkList(t, s, "members", bearer(ann)); len(l) != 1 || apitest.Obj(t, l[0])["id"] != pk["id"] {
			t.Fatalf("%s lists %v", s.Stack.Node.NodeID(), l)
		}
	}

	// Sign in by email: options on b, verify on the leader; replay on a.
	dev.cred.Counter = 2
	opts, ticket := pkOptions(t, b, pkURL("members", "login/options"), map[string]any{"email": "ann@example.com"}, nil)
	body := map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}
	d := data(t, leader, 200, "POST", pkURL("members", "login/verify"), body, nil)
	data(t, a, 200, "GET", "/api/v1/auth/me", nil, bearer(d["token"].(string)))
	data(t, a, 401, "POST", pkURL("members", "login/verify"), body, nil)

	// Discoverable: options on the leader, verify on a.
	dev.cred.Counter = 3
	dev.signIn(t, leader, a, "members", "")

	// The counter is the cluster's: 3 was used through a, b refuses it.
	opts, ticket = pkOptions(t, b, pkURL("members", "login/options"), nil, nil)
	e := data(t, b, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
	if e["details"] == nil {
		t.Fatalf("a repeated counter through another node: %v", e)
	}

	// Verifies of one ticket racing on the three nodes: one wins.
	dev.cred.Counter = 0
	opts, ticket = pkOptions(t, a, pkURL("members", "login/options"), nil, nil)
	body = map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}
	codes := make(chan int, 3)
	for _, s := range []*apitest.Server{leader, a, b} {
		go func() {
			res, _, err := s.Send("POST", pkURL("members", "login/verify"), body, nil)
			if err != nil {
				codes <- 0
				return
			}
			codes <- res.StatusCode
		}()
	}
	won := 0
	for range 3 {
		switch st := <-codes; st {
		case 200:
			won++
		case 401:
		default:
			t.Errorf("a racing verify answered %d", st)
		}
	}
	if won != 1 {
		t.Fatalf("%d of three racing verifies of one ticket succeeded", won)
	}

	// Delete through the leader: no node signs in with it any more.
	if res, out := leader.Do(t, "DELETE", pkURL("members", "credentials/"+pk["id"].(string)), nil, bearer(ann)); res.StatusCode != 204 {
		t.Fatalf("delete: %d %s", res.StatusCode, out)
	}
	opts, ticket = pkOptions(t, a, pkURL("members", "login/options"), nil, nil)
	data(t, b, 401, "POST", pkURL("members", "login/verify"), map[string]any{"ticket": ticket, "response": dev.assert(t, opts)}, nil)
}
