package engine_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"svcd/engine"
	"svcd/fsm/fsmtest"
)

// bareCore is the engine's core on a real store with no module wired.
func bareCore(t *testing.T) *engine.Engine {
	t.Helper()
	store := fsmtest.Open(t)
	e, err := engine.New(engine.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	if err := e.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestListWithoutSearcher: a core without the search module keeps
// collections with searchable and vector fields working, and refuses
// search= and nearVector with a 400 that says so, never a 500 or a list
// that ignores them.
func TestListWithoutSearcher(t *testing.T) {
	e := bareCore(t)
	ctx := context.Background()
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "a1", Role: engine.RoleOwner}
	if _, _, err := e.Schema().CreateCollection(ctx, []byte(`{"name":"posts","type":"base","view_rule":"","create_rule":"",
		"fields":[{"name":"title","type":"text","searchable":true},{"name":"emb","type":"vector","dimensions":2}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Records().CreateRecord(ctx, admin, "posts", []byte(`{"title":"hello world","emb":[1,0]}`)); err != nil {
		t.Fatal(err)
	}
	list, err := e.Records().ListRecords(ctx, admin, "posts", engine.ListQuery{Search: "  "})
	if err != nil || list.TotalItems != 1 {
		t.Fatalf("plain list (blank search): %v, %+v", err, list)
	}
	for _, tc := range []struct {
		name string
		q    engine.ListQuery
		want string
	}{
		{"search", engine.ListQuery{Search: "hello"}, "search parameter is not supported"},
		{"nearVector", engine.ListQuery{HasNear: true, NearVector: "[1,0]"}, "nearVector parameter is not supported"},
	} {
		for _, p := range []engine.Principal{admin, {Kind: engine.Anonymous}} {
			_, err := e.Records().ListRecords(ctx, p, "posts", tc.q)
			de := engine.AsError(err)
			if de == nil || de.Kind != engine.KindBadRequest || !strings.Contains(de.Message, tc.want) {
				t.Errorf("%s as %v: %v, want a bad request (400) saying %q", tc.name, p.Kind, err, tc.want)
			}
		}
	}
}
