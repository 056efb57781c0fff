package auth

import (
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// TestCredentialsTouched: the events that real commands emit touch the
// principals whose credential or rights they change, and no others; Recheck
// then agrees (an ended credential fails, a changed one comes back changed).
func TestCredentialsTouched(t *testing.T) {
	f := newFlowEnv(t, time.Now())
	var mu sync.Mutex
	var evs []fsm.Event
	f.e.Store().Observe(func(batch []fsm.Event) {
		mu.Lock()
		evs = append(evs, batch...)
		mu.Unlock()
	})
	const pw = "a-long-password-1"
	client := ClientInfo{IP: "10.0.0.1"}
	setup, _, err := f.a.adm.SetupAdmin(f.ctx, "owner@example.com", pw, client)
	f.ok(err)
	owner := f.principal(setup.Token)
	ed, _, err := f.a.adm.CreateAdmin(f.ctx, owner, "ed@example.com", pw, "editor")
	f.ok(err)
	edSession, err := f.a.adm.LoginAdmin(f.ctx, "ed@example.com", pw, client)
	f.ok(err)
	minted, _, err := f.a.adm.MintAPIToken(f.ctx, owner, "ci", []string{"read"}, 0)
	f.ok(err)
	annID, bobID := f.user("ann@example.com"), f.user("bob@example.com")
	imp, err := f.a.Impersonate(f.ctx, f.principal(edSession.Token), "members", annID)
	f.ok(err)
	ps := map[string]engine.Principal{
		"owner": owner, "ed": f.principal(edSession.Token), "token": f.principal(minted.Token),
		"ann": f.principal(f.login("ann@example.com").Token), "bob": f.principal(f.login("bob@example.com").Token),
		"imp": f.principal(imp.Token), "anonymous": {},
	}

	// step runs fn and returns the principals its events touch.
	step := func(fn func()) []string {
		t.Helper()
		mu.Lock()
		evs = nil
		mu.Unlock()
		fn()
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for name, p := range ps {
			for _, ev := range evs {
				if c := f.a.CredentialsTouched(ev); c != nil && c.Match(p) {
					if (c.ID != "" && c.ID != p.ID) || (c.TokenID != "" && c.TokenID != p.TokenID) {
						t.Errorf("%s matched outside its index keys %q %q", name, c.ID, c.TokenID)
					}
					out = append(out, name)
					break
				}
			}
		}
		sort.Strings(out)
		return out
	}
	want := func(what string, got []string, names ...string) {
		t.Helper()
		if names == nil {
			names = []string{}
		}
		if got == nil {
			got = []string{}
		}
		if !reflect.DeepEqual(got, names) {
			t.Errorf("%s touched %v, want %v", what, got, names)
		}
	}
	holds := func(name string, ok bool) engine.Principal {
		t.Helper()
		q, err := f.a.Recheck(f.ctx, ps[name])
		if ok != (err == nil) {
			t.Fatalf("recheck %s: %v, want it to hold: %v", name, err, ok)
		}
		return q
	}

	want("a schema change", step(func() {
		_, _, err := f.e.Schema().CreateCollection(f.ctx, []byte(`{"name":"posts","type":"base","fields":[{"name":"title","type":"text"}]}`))
		f.ok(err)
	}), "ann", "bob", "ed", "imp", "owner", "token")
	var post string
	want("a record of a base collection", step(func() {
		rec, _, err := f.e.Records().CreateRecord(f.ctx, owner, "posts", []byte(`{"title":"a"}`))
		f.ok(err)
		post = string(rec.JSON[7:22])
		_, _, err = f.e.Records().UpdateRecord(f.ctx, owner, "posts", post, []byte(`{"title":"b"}`), "")
		f.ok(err)
	}))
	want("an update of bob's record", step(func() {
		_, _, err := f.e.Records().UpdateRecord(f.ctx, owner, "members", bobID, []byte(`{"name":"Robert"}`), "")
		f.ok(err)
	}), "bob")
	if q := holds("bob", true); q.AuthRecord["name"] != "Robert" {
		t.Errorf("@request.auth after the update: %v", q.AuthRecord)
	}
	want("impersonation switched off", step(func() {
		_, _, err := f.e.PatchSettings(f.ctx, []byte(`{"auth.impersonation.enabled":"0"}`))
		f.ok(err)
	}), "imp")
	holds("imp", false)
	step(func() {
		_, _, err := f.e.PatchSettings(f.ctx, []byte(`{"auth.impersonation.enabled":"1"}`))
		f.ok(err)
	})
	holds("imp", true)
	viewer := "viewer"
	want("ed demoted", step(func() {
		_, _, err := f.a.adm.UpdateAdmin(f.ctx, owner, ed.ID, AdminPatch{Role: &viewer})
		f.ok(err)
	}), "ed", "imp")
	if q := holds("ed", true); q.Role != engine.RoleViewer {
		t.Errorf("ed's role after the demotion: %v", q.Role)
	}
	holds("imp", false) // a viewer may not impersonate
	want("the API token deleted", step(func() {
		_, err := f.a.adm.DeleteAPIToken(f.ctx, minted.ID)
		f.ok(err)
	}), "token")
	holds("token", false)
	want("ann's logout", step(func() {
		_, err := f.a.Logout(f.ctx, ps["ann"])
		f.ok(err)
	}), "ann")
	holds("ann", false)
	want("bob's record deleted", step(func() {
		_, err := f.e.Records().DeleteRecord(f.ctx, owner, "members", bobID, "")
		f.ok(err)
	}), "bob")
	holds("bob", false)
	want("ed deleted", step(func() {
		_, err := f.a.adm.DeleteAdmin(f.ctx, ed.ID)
		f.ok(err)
	}), "ed", "imp", "token")
	holds("ed", false)
	want("force-logout-all", step(func() {
		_, err := f.a.adm.LogoutAllAdmins(f.ctx)
		f.ok(err)
	}), "ed", "imp", "owner", "token")
	holds("owner", false)
	holds("anonymous", true)
}
