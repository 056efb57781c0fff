package api_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Finding 3 of the security review (issue 13): open realtime streams
// outlived their credentials. A WebSocket whose credential ends gets an
// unauthorized error and carries on as anonymous; an SSE stream gets an
// error event and is closed. Rights that change without ending the
// credential (an admin's role, the fields of a user's record) apply to the
// next event.

// credServer starts a node with users (auth, with a role field; each user
// views its own record), posts (public), notes (any signed-in caller),
// staff (users whose record says role staff) and locked (admins only).
func credServer(t *testing.T) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text"), f("role", "text")},
		"create_rule", "", "view_rule", "id = @request.auth.id", "update_rule", "id = @request.auth.id"))
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}, "view_rule", "@request.auth.id != ''"))
	s.CreateCollection(t, coll("staff", "base", []map[string]any{f("title", "text")}, "view_rule", "@request.auth.role = 'staff'"))
	s.CreateCollection(t, coll("locked", "base", []map[string]any{f("title", "text")}))
	return s
}

// credUser signs up email in users and returns its id and token.
func credUser(t *testing.T, s *apitest.Server, email string) (id, tok string) {
	t.Helper()
	id = register(t, s, "users", email, userPassword)
	return id, signIn(t, s, "users", email, userPassword)["token"].(string)
}

// wsAs opens a WebSocket with headers and subscribes to topics.
func wsAs(t *testing.T, s *apitest.Server, headers map[string]string, topics ...string) *wsClient {
	t.Helper()
	w := dialWS(t, s, "", headers)
	if m := w.ask(map[string]any{"type": "subscribe", "topics": topics}); m["type"] != "subscribed" {
		t.Fatalf("subscribe %v: %v", topics, m)
	}
	return w
}

// publish creates a record titled title in each collection, in order.
func publish(t *testing.T, s *apitest.Server, title string, colls ...string) {
	t.Helper()
	for _, c := range colls {
		s.CreateRecord(t, c, map[string]any{"title": title})
	}
}

// wantEvents reads len(want) messages and compares their summaries.
func (w *wsClient) wantEvents(want ...string) {
	w.t.Helper()
	if got := w.events(len(want)); !reflect.DeepEqual(got, want) {
		w.t.Fatalf("got %v, want %v", got, want)
	}
}

// wantEvents reads len(want) frames and compares their summaries.
func (c *sseClient) wantEvents(want ...string) {
	c.t.Helper()
	if got, _ := c.events(len(want)); !reflect.DeepEqual(got, want) {
		c.t.Fatalf("got %v, want %v", got, want)
	}
}

// ended fails unless the stream ends within 5 s with no further frame.
func (c *sseClient) ended() {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if ok {
			c.t.Fatalf("a frame after the stream should have ended: %+v", f)
		}
	case <-time.After(5 * time.Second):
		c.t.Fatal("the stream is still open")
	}
}

func TestRealtimeCredentialsWebSocket(t *testing.T) {
	t.Parallel()
	s := credServer(t)
	all := []string{"posts", "notes", "locked"}

	// A user's credential ends: unauthorized, then public events only.
	userEnds := []struct {
		name string
		end  func(t *testing.T, id, tok string)
	}{
		{"logout", func(t *testing.T, _, tok string) {
			data(t, s, http.StatusOK, "POST", "/api/v1/auth/logout", nil, bearer(tok))
		}},
		{"password changed through PATCH", func(t *testing.T, id, tok string) {
			data(t, s, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"password": "next-password-456", "oldPassword": userPassword}, bearer(tok))
		}},
		{"password set by an admin", func(t *testing.T, id, _ string) {
			s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"password": "next-password-456"})
		}},
		{"record deleted", func(t *testing.T, id, _ string) {
			s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/users/"+id, nil)
		}},
	}
	for i, tc := range userEnds {
		t.Run(tc.name, func(t *testing.T) {
			id, tok := credUser(t, s, "u"+string(rune('a'+i))+"@example.com")
			w := wsAs(t, s, bearer(tok), all...)
			publish(t, s, "before", "notes", "posts")
			w.wantEvents("create:notes:before", "create:posts:before")
			tc.end(t, id, tok)
			wantErr(t, w.read(), "unauthorized")
			publish(t, s, "after", "notes", "posts")
			w.wantEvents("create:posts:after")
			w.quiet()
		})
	}

	t.Run("admin deleted", func(t *testing.T) {
		id, tok := newAdmin(t, s, "deleted@example.com", "editor")
		w := wsAs(t, s, bearer(tok), all...)
		publish(t, s, "before", "locked", "posts")
		w.wantEvents("create:locked:before", "create:posts:before")
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+id, nil)
		wantErr(t, w.read(), "unauthorized")
		publish(t, s, "after", "locked", "notes", "posts")
		w.wantEvents("create:posts:after")
		w.quiet()
	})

	t.Run("admin demoted to viewer reads as anonymous, promoted back as an admin", func(t *testing.T) {
		id, tok := newAdmin(t, s, "demoted@example.com", "editor")
		w := wsAs(t, s, bearer(tok), all...)
		publish(t, s, "editor", "locked", "posts")
		w.wantEvents("create:locked:editor", "create:posts:editor")
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"role": "viewer"})
		// The credential holds: no error, but a viewer reads app data
		// as anonymous.
		publish(t, s, "viewer", "locked", "notes", "posts")
		w.wantEvents("create:posts:viewer")
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"role": "editor"})
		publish(t, s, "editor again", "locked", "posts")
		w.wantEvents("create:locked:editor again", "create:posts:editor again")
		w.quiet()
	})

	t.Run("API token deleted", func(t *testing.T) {
		tokID, tok := mintRTToken(t, s, 0, "read")
		w := wsAs(t, s, bearer(tok), all...)
		publish(t, s, "before", "locked", "posts")
		w.wantEvents("create:locked:before", "create:posts:before")
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/api-tokens/"+tokID, nil)
		wantErr(t, w.read(), "unauthorized")
		publish(t, s, "after", "locked", "posts")
		w.wantEvents("create:posts:after")
		w.quiet()
	})

	t.Run("impersonating admin deleted", func(t *testing.T) {
		uid, _ := credUser(t, s, "impersonated@example.com")
		adminID, admin := newAdmin(t, s, "impersonator@example.com", "editor")
		imp := data(t, s, http.StatusOK, "POST", "/api/v1/admin/impersonate/users/"+uid, nil, bearer(admin))["token"].(string)
		w := wsAs(t, s, bearer(imp), all...)
		publish(t, s, "before", "locked", "notes", "posts")
		w.wantEvents("create:notes:before", "create:posts:before")
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+adminID, nil)
		wantErr(t, w.read(), "unauthorized")
		publish(t, s, "after", "notes", "posts")
		w.wantEvents("create:posts:after")
		w.quiet()
	})

	t.Run("impersonation switched off", func(t *testing.T) {
		uid, _ := credUser(t, s, "impersonated2@example.com")
		imp := data(t, s, http.StatusOK, "POST", "/api/v1/admin/impersonate/users/"+uid, nil, s.AdminHeaders(t, nil))["token"].(string)
		w := wsAs(t, s, bearer(imp), "notes", "posts")
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.impersonation.enabled": "0"})
		defer s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.impersonation.enabled": "1"})
		wantErr(t, w.read(), "unauthorized")
		publish(t, s, "after", "notes", "posts")
		w.wantEvents("create:posts:after")
		w.quiet()
	})

	t.Run("a schema change rechecks and keeps credentials that hold", func(t *testing.T) {
		_, tok := credUser(t, s, "kept@example.com")
		w := wsAs(t, s, bearer(tok), "notes")
		s.CreateCollection(t, coll("extra", "base", []map[string]any{f("title", "text")}))
		publish(t, s, "kept", "notes")
		w.wantEvents("create:notes:kept")
		w.quiet()
	})

	t.Run("a change of the user's record is seen by @request.auth rules at once", func(t *testing.T) {
		id, tok := credUser(t, s, "staffer@example.com")
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"role": "staff"})
		w := wsAs(t, s, bearer(tok), "staff", "posts")
		publish(t, s, "staff", "staff", "posts")
		w.wantEvents("create:staff:staff", "create:posts:staff")
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"role": "member"})
		publish(t, s, "member", "staff", "posts")
		w.wantEvents("create:posts:member")
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"role": "staff"})
		publish(t, s, "staff again", "staff", "posts")
		w.wantEvents("create:staff:staff again", "create:posts:staff again")
		w.quiet()
	})

	t.Run("the auth message sets the principal later checks use", func(t *testing.T) {
		_, first := credUser(t, s, "first@example.com")
		_, second := credUser(t, s, "second@example.com")
		w := wsAs(t, s, bearer(first), "notes", "posts")
		if m := w.ask(map[string]any{"type": "auth", "token": second}); m["type"] != "authed" {
			t.Fatalf("auth: %v", m)
		}
		// The credential the connection opened with is no longer its own.
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/logout", nil, bearer(first))
		publish(t, s, "second", "notes", "posts")
		w.wantEvents("create:notes:second", "create:posts:second")
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/logout", nil, bearer(second))
		wantErr(t, w.read(), "unauthorized")
		publish(t, s, "anonymous", "notes", "posts")
		w.wantEvents("create:posts:anonymous")
		// Signing in again restores the rights.
		_, third := credUser(t, s, "third@example.com")
		if m := w.ask(map[string]any{"type": "auth", "token": third}); m["type"] != "authed" {
			t.Fatalf("auth: %v", m)
		}
		publish(t, s, "third", "notes", "posts")
		w.wantEvents("create:notes:third", "create:posts:third")
		w.quiet()
	})

	t.Run("presences of an ended credential leave", func(t *testing.T) {
		uid, tok := credUser(t, s, "present@example.com")
		w := dialWS(t, s, "", bearer(tok))
		if m := w.ask(map[string]any{"type": "presence-track", "channel": "room", "state": map[string]any{}}); m["type"] != "presence-state" || !hasKey(presenceKeys(t, m["state"]), uid) {
			t.Fatalf("track: %v", m)
		}
		obs := dialWS(t, s, "", nil)
		if m := obs.ask(map[string]any{"type": "presence-state", "channel": "room"}); !hasKey(presenceKeys(t, m["state"]), uid) {
			t.Fatalf("observe: %v", m)
		}
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/logout", nil, bearer(tok))
		wantErr(t, w.read(), "unauthorized")
		if m := w.read(); m["type"] != "presence-state" || len(presenceKeys(t, m["state"])) != 0 {
			t.Fatalf("after the credential ended: %v", m)
		}
		if got := presenceEvent(t, obs.read()); got != "leave:"+uid {
			t.Fatalf("observer got %s", got)
		}
		if got := getPresence(t, s, "room"); len(got) != 0 {
			t.Fatalf("presence after the credential ended: %v", got)
		}
		// Tracking again is as anonymous: keyed by the connection.
		if m := w.ask(map[string]any{"type": "presence-track", "channel": "room", "state": map[string]any{}}); m["type"] != "presence-state" || hasKey(presenceKeys(t, m["state"]), uid) {
			t.Fatalf("track again: %v", m)
		}
	})

	// Last: it signs out every admin, the owner's token of s included.
	t.Run("force-logout-all", func(t *testing.T) {
		_, tok := newAdmin(t, s, "forced@example.com", "editor")
		w := wsAs(t, s, bearer(tok), all...)
		data(t, s, http.StatusOK, "POST", "/api/v1/admin/security/force-logout-all", nil, s.AdminHeaders(t, nil))
		wantErr(t, w.read(), "unauthorized")
		w.quiet()
	})
}

func TestRealtimeCredentialsSSE(t *testing.T) {
	t.Parallel()
	s := credServer(t)
	open := func(t *testing.T, tok string) *sseClient {
		t.Helper()
		c := openSSE(t, s, "topics=posts,notes,locked", bearer(tok))
		if f := c.next(); f.event != "subscribed" {
			t.Fatalf("frame %+v", f)
		}
		return c
	}
	closed := func(t *testing.T, c *sseClient) {
		t.Helper()
		if f := c.next(); f.event != "error" || f.data["code"] != "unauthorized" || f.data["message"] == "" {
			t.Fatalf("frame %+v, want an unauthorized error", f)
		}
		c.ended()
		if res, _ := s.Do(t, http.MethodDelete, "/api/v1/realtime/"+c.clientID, nil, nil); res.StatusCode != http.StatusNotFound {
			t.Fatalf("the client is still registered: DELETE answered %d", res.StatusCode)
		}
	}

	t.Run("logout", func(t *testing.T) {
		_, tok := credUser(t, s, "sse-logout@example.com")
		c := open(t, tok)
		publish(t, s, "before", "notes", "posts")
		c.wantEvents("create:notes:before", "create:posts:before")
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/logout", nil, bearer(tok))
		closed(t, c)
	})
	t.Run("record deleted", func(t *testing.T) {
		id, tok := credUser(t, s, "sse-deleted@example.com")
		c := open(t, tok)
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/users/"+id, nil)
		closed(t, c)
	})
	t.Run("password set by an admin", func(t *testing.T) {
		id, tok := credUser(t, s, "sse-reset@example.com")
		c := open(t, tok)
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"password": "next-password-456"})
		closed(t, c)
	})
	t.Run("every session ended by an admin", func(t *testing.T) {
		id, tok := credUser(t, s, "sse-ended@example.com")
		c := open(t, tok)
		s.MustAdmin(t, http.StatusOK, "POST", "/api/v1/admin/users/users/"+id+"/logout", nil)
		closed(t, c)
	})
	t.Run("admin deleted", func(t *testing.T) {
		id, tok := newAdmin(t, s, "sse-admin@example.com", "editor")
		c := open(t, tok)
		publish(t, s, "before", "locked")
		c.wantEvents("create:locked:before")
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+id, nil)
		closed(t, c)
	})
	t.Run("admin demoted to viewer reads as anonymous", func(t *testing.T) {
		id, tok := newAdmin(t, s, "sse-viewer@example.com", "editor")
		c := open(t, tok)
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+id, map[string]any{"role": "viewer"})
		publish(t, s, "viewer", "locked", "notes", "posts")
		c.wantEvents("create:posts:viewer")
		c.quiet()
	})
	t.Run("API token deleted", func(t *testing.T) {
		tokID, tok := mintRTToken(t, s, 0, "read")
		c := open(t, tok)
		s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/api-tokens/"+tokID, nil)
		closed(t, c)
	})
}

// A stream ends (SSE) or downgrades (WebSocket) when its token expires,
// with no event to trigger it.
func TestRealtimeCredentialsExpire(t *testing.T) {
	t.Parallel()
	s := credServer(t)
	_, tok := mintRTToken(t, s, 2, "read")
	w := wsAs(t, s, bearer(tok), "locked", "posts")
	c := openSSE(t, s, "topics=locked,posts", bearer(tok))
	if f := c.next(); f.event != "subscribed" {
		t.Fatalf("frame %+v", f)
	}
	publish(t, s, "before", "locked")
	w.wantEvents("create:locked:before")
	c.wantEvents("create:locked:before")
	start := time.Now()
	m, err := w.readWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("no message within 10 s: %v", err)
	}
	wantErr(t, m, "unauthorized")
	if f := c.next(); f.event != "error" || f.data["code"] != "unauthorized" {
		t.Fatalf("frame %+v, want an unauthorized error", f)
	}
	c.ended()
	t.Logf("ended %v after the first event (ttl 2 s)", time.Since(start).Round(10*time.Millisecond))
	publish(t, s, "after", "locked", "posts")
	w.wantEvents("create:posts:after")
	w.quiet()
}

// mintRTToken mints an API token of the owner with scopes (ttl 0: the
// default) and returns its id and the token.
func mintRTToken(t *testing.T, s *apitest.Server, ttl int, scopes ...string) (id, tok string) {
	t.Helper()
	body := map[string]any{"name": "rt", "scopes": scopes}
	if ttl > 0 {
		body["ttl_seconds"] = ttl
	}
	d := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/admin/api-tokens", body)["data"])
	return d["id"].(string), d["token"].(string)
}
