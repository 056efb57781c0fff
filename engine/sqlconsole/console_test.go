package sqlconsole_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"svcd/engine"
	"svcd/engine/sqlconsole"
	"svcd/fsm/fsmtest"
)

// newConsole wires the module on a real store whose commands apply as a
// log would deliver them.
func newConsole(t *testing.T, opts sqlconsole.Options) (*engine.Engine, *sqlconsole.Console) {
	t.Helper()
	store := fsmtest.Open(t)
	e, err := engine.New(engine.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c := sqlconsole.New(e, opts)
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	if err := e.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, c
}

var owner = engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_aaaaaaaaaaaaaaa", Role: engine.RoleOwner}

// TestWriteRefusesVolatileFunctions: a write through the log that calls
// a function whose value differs between replicas never reaches the log;
// a deterministic one changes the rows on apply.
func TestWriteRefusesVolatileFunctions(t *testing.T) {
	e, c := newConsole(t, sqlconsole.Options{})
	ctx := context.Background()
	if _, _, err := e.Schema().CreateCollection(ctx, []byte(`{"name":"posts","type":"base","fields":[{"name":"n","type":"number"}]}`)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE posts SET n = random()",
		"UPDATE posts SET n = abs(random()) % 10 WHERE 1",
		"UPDATE posts SET updated = unixepoch('now')",
		"INSERT INTO posts (id, created, updated, n) VALUES (hex(randomblob(8)), 1, 1, 1)",
		"UPDATE posts SET n = strftime('%s', 'now')",
		"DELETE FROM posts WHERE created < CURRENT_TIMESTAMP",
	} {
		res, idx, err := c.Write(ctx, owner, q, nil)
		if err != nil || res.OK || res.ErrorCode != sqlconsole.CodeNotDeterministic || idx != 0 {
			t.Errorf("%s: %+v %d %v", q, res, idx, err)
		}
	}
	for q, code := range map[string]string{
		"DELETE FROM _svc_settings":        sqlconsole.CodeForbidden,
		"CREATE TABLE x (y)":               sqlconsole.CodeForbidden,
		"PRAGMA user_version = 3":          sqlconsole.CodeForbidden,
		"SELECT 1":                         sqlconsole.CodeSQLError,
		"UPDATE posts SET n = 1; SELECT 2": sqlconsole.CodeSyntax,
		"ATTACH DATABASE ':memory:' AS x":  sqlconsole.CodeForbidden,
	} {
		if res, _, err := c.Write(ctx, owner, q, nil); err != nil || res.ErrorCode != code {
			t.Errorf("%s: %+v %v, want %s", q, res, err, code)
		}
	}
	res, idx, err := c.Write(ctx, owner, "INSERT INTO posts (id, created, updated, n) VALUES (?, ?, ?, ?)", []any{"aaaaaaaaaaaaaaa", 1.0, 1.0, 7.0})
	if err != nil || !res.OK || res.Changes != 1 || idx == 0 {
		t.Fatalf("insert: %+v %d %v", res, idx, err)
	}
	got, err := c.Run(ctx, owner, sqlconsole.ModeReadonly, "SELECT n FROM posts", nil, 0)
	if err != nil || !got.OK || len(got.Rows) != 1 || fmt.Sprint(got.Rows[0][0]) != "7" {
		t.Errorf("after the write: %+v %v", got, err)
	}
	if res, _, _ := c.Write(ctx, owner, "INSERT INTO posts (id, created, updated, n) VALUES ('aaaaaaaaaaaaaaa', 1, 1, 1)", nil); res.OK || res.ErrorCode != sqlconsole.CodeSQLError {
		t.Errorf("duplicate: %+v", res)
	}
}

// TestSandboxEvictedWhenIdle: an unused sandbox's file goes away after the
// idle time, and the next run builds a new one.
func TestSandboxEvictedWhenIdle(t *testing.T) {
	dir := t.TempDir()
	_, c := newConsole(t, sqlconsole.Options{SandboxDir: dir, SandboxIdle: 200 * time.Millisecond})
	ctx := context.Background()
	if res, err := c.Run(ctx, owner, sqlconsole.ModeSandbox, "CREATE TABLE scratch (x)", nil, 0); err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("sandbox files: %v", entries)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _ := os.ReadDir(dir)
		if len(entries) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox not evicted: %v", entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, err := c.Run(ctx, owner, sqlconsole.ModeSandbox, "SELECT * FROM scratch", nil, 0)
	if err != nil || res.OK || res.ErrorCode != sqlconsole.CodeSQLError {
		t.Errorf("after eviction: %+v %v", res, err)
	}
}

// TestTailIsVisible guards the driver: a second statement is seen (the
// console reads the driver's unexported tail), so it is refused.
func TestTailIsVisible(t *testing.T) {
	_, c := newConsole(t, sqlconsole.Options{})
	res, err := c.Run(context.Background(), owner, sqlconsole.ModeReadonly, "SELECT 1; SELECT 2", nil, 0)
	if err != nil || res.ErrorCode != sqlconsole.CodeSyntax {
		t.Errorf("%+v %v", res, err)
	}
	res, err = c.Run(context.Background(), owner, sqlconsole.ModeReadonly, "SELECT 1;  ", nil, 0)
	if err != nil || !res.OK {
		t.Errorf("trailing semicolon: %+v %v", res, err)
	}
}
