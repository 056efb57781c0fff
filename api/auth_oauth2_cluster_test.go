package api_test

import (
	"sync"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"svcd/api/apitest"
)

// TestOAuth2Cluster: on three nodes, a sign-in begun on one node finishes
// on another (the authorization is stored through the log and spent by
// the first exchange, whichever node it reaches); a merge token made on
// one node is confirmed on another; two exchanges of one new identity at
// once on two nodes make one account.
func TestOAuth2Cluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	fl := c.Followers(t)
	a, b := fl[0], fl[1]
	leader.CreateCollection(t, members())
	m := startMockOIDC(t, leader)
	c.Sync(t)

	ann := &mockoidc.MockUser{Subject: "ann-sub", Email: "ann@example.com", EmailVerified: true}
	m.QueueUser(ann)
	u, state := oauthAuthorize(t, a, "members", "oidc", "use_pkce=1")
	code, _ := oauthVisit(t, u)
	d := oauthExchange(t, b, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).ok()
	annID := recordID(t, d)
	if annID == "" || apitest.Obj(t, d["meta"])["is_new"] != true {
		t.Fatalf("begun on %s, finished on %s: %v", a.Stack.Node.NodeID(), b.Stack.Node.NodeID(), d)
	}
	if st, out := oauthExchange(t, leader, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).pair(); st != 400 ||
		out["error"] != "Invalid or expired OAuth2 state" {
		t.Fatalf("the state again on the leader: %d %v", st, out)
	}

	register(t, leader, "members", "bob@example.com", userPassword)
	c.Sync(t)
	m.QueueUser(&mockoidc.MockUser{Subject: "bob-sub", Email: "bob@example.com", EmailVerified: true})
	u, state = oauthAuthorize(t, b, "members", "oidc", "")
	code, _ = oauthVisit(t, u)
	merge := oauthExchange(t, a, "members", map[string]any{"provider": "oidc", "code": code, "state": state}, nil).ok()
	d = data(t, b, 200, "POST", "/api/v1/auth/members/oauth2/merge-confirm",
		map[string]any{"merge_token": merge["merge_token"], "password": userPassword}, nil)
	if apitest.Obj(t, d["record"])["email"] != "bob@example.com" {
		t.Fatalf("merge made on %s, confirmed on %s: %v", a.Stack.Node.NodeID(), b.Stack.Node.NodeID(), d)
	}

	// Two codes for one new identity, exchanged at once on two nodes.
	zed := &mockoidc.MockUser{Subject: "zed-sub", Email: "zed@example.com", EmailVerified: true}
	var codes, states [2]string
	for i := range codes {
		m.QueueUser(zed)
		u, states[i] = oauthAuthorize(t, leader, "members", "oidc", "")
		codes[i], _ = oauthVisit(t, u)
	}
	var wg sync.WaitGroup
	var raw [2][]byte
	for i, s := range []*apitest.Server{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, out, err := s.Send("POST", "/api/v1/auth/members/oauth2/exchange",
				map[string]any{"provider": "oidc", "code": codes[i], "state": states[i], "redirectUri": oauthRedirect}, nil)
			if err != nil || res.StatusCode != 200 {
				t.Errorf("exchange %d: %v %s", i, err, out)
				return
			}
			raw[i] = out
		}()
	}
	wg.Wait()
	if raw[0] == nil || raw[1] == nil {
		return
	}
	var answers [2]map[string]any
	for i, out := range raw {
		answers[i] = apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
	}
	news := 0
	for _, d := range answers {
		if apitest.Obj(t, d["meta"])["is_new"] == true {
			news++
		}
	}
	if recordID(t, answers[0]) != recordID(t, answers[1]) || news != 1 {
		t.Fatalf("two exchanges of one identity: %v and %v", answers[0], answers[1])
	}
}
