package stack_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/realtime"
)

// TestRealtimeIDsAgreeAcrossReplicas: the realtime event ids come from the
// log, so a node and two replicas that replay its log (in batches and one
// entry at a time) deliver the same events with the same ids, including
// the several events of one command (a delete that cascades and one that
// clears relations).
func TestRealtimeIDsAgreeAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	node.Realtime.SetMaxPending(1 << 20)
	nodeConn := anonConn(t, node.Realtime)

	ctx := context.Background()
	admin := engine.Principal{Kind: engine.AdminPrincipal, Role: engine.ParseRole("owner")}
	mustColl := func(body string) {
		if _, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(body)); err != nil {
			t.Fatalf("create collection: %v", err)
		}
	}
	// Public collections: the clients are anonymous (a principal made up
	// here has no credential that the hub's rechecks would accept).
	mustColl(`{"name": "authors", "type": "base", "view_rule": "", "fields": [{"name": "name", "type": "text"}]}`)
	mustColl(`{"name": "posts", "type": "base", "view_rule": "", "fields": [{"name": "title", "type": "text"},
		{"name": "author", "type": "relation", "collection": "authors", "cascade": true}]}`)
	mustColl(`{"name": "notes", "type": "base", "view_rule": "", "fields": [{"name": "post", "type": "relation", "collection": "posts"}]}`)
	create := func(coll, body string) string {
		rec, _, err := node.Engine.Records().CreateRecord(ctx, admin, coll, []byte(body))
		if err != nil {
			t.Fatalf("create %s: %v", coll, err)
		}
		return string(rec.JSON[7:22]) // {"id":"<15 characters>"
	}
	for i := range 3 {
		a := create("authors", fmt.Sprintf(`{"name": "a%d"}`, i))
		p1 := create("posts", fmt.Sprintf(`{"title": "p%d", "author": %q}`, i, a))
		create("posts", fmt.Sprintf(`{"title": "q%d", "author": %q}`, i, a))
		create("notes", fmt.Sprintf(`{"post": %q}`, p1))
		if _, _, err := node.Engine.Records().UpdateRecord(ctx, admin, "authors", a, []byte(`{"name": "renamed"}`), ""); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			// Deletes the author, cascades to its two posts, clears the note.
			if _, err := node.Engine.Records().DeleteRecord(ctx, admin, "authors", a, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	onNode := drain(t, nodeConn)
	node.close(t)

	entries, _, _ := replReadLog(t, dir)
	tmp := t.TempDir()
	for _, batch := range []int{len(entries), 1} {
		rep := replOpenStore(t, filepath.Join(tmp, fmt.Sprintf("replica%d.db", batch)))
		hub := realtime.NewHub(realtime.Options{Auth: realtime.EngineAuthorizer(rep.Engine, rep.Auth), MaxPending: 1 << 20})
		rep.Observe(hub.Observe)
		conn := anonConn(t, hub)
		for i := 0; i < len(entries); i += batch {
			rep.ApplyBatch(entries[i:min(i+batch, len(entries))])
		}
		rep.checkFatal(t, "replay")
		if got := drain(t, conn); !reflect.DeepEqual(got, onNode) {
			t.Errorf("replica (batches of %d) delivered\n%v\nthe node delivered\n%v", batch, got, onNode)
		}
		rep.Close()
	}
	multi := 0
	for _, e := range onNode {
		id, _, _ := strings.Cut(e, " ")
		if _, seq, _ := realtime.ParseID(id); seq > 0 {
			multi++
		}
	}
	if len(onNode) < 20 || multi < 4 {
		t.Fatalf("the workload delivered %d events, %d of them after the first of their command: %v", len(onNode), multi, onNode)
	}
	t.Logf("%d events, %d of them after the first of their command; last: %s", len(onNode), multi, onNode[len(onNode)-1])
}

// anonConn subscribes an anonymous client to every event of hub.
func anonConn(t *testing.T, hub *realtime.Hub) *realtime.Conn {
	t.Helper()
	c := hub.Connect(engine.Principal{})
	if _, err := c.Subscribe([]string{"*"}, ""); err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// drain returns what conn has to deliver now, as "id action collection
// record-id" lines.
func drain(t *testing.T, conn *realtime.Conn) []string {
	t.Helper()
	var out []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		msgs, err := conn.Next(ctx)
		cancel()
		if err != nil {
			return out
		}
		for _, m := range msgs {
			id := m.ID
			if m.Type != "delete" {
				id = string(m.Record[7:22])
			}
			out = append(out, fmt.Sprintf("%s %s %s %s", m.EventID, m.Type, m.Collection, id))
		}
	}
}
