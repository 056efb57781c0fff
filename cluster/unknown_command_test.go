package cluster_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"svcd/cluster"
	"svcd/fsm"
)

// stringCodec carries string results and error texts between nodes.
type stringCodec struct{}

func (stringCodec) EncodeResult(v any, err error) ([]byte, error) {
	out := struct{ V, Err string }{V: fmt.Sprint(v)}
	if err != nil {
		out.Err = err.Error()
	}
	return json.Marshal(out)
}

func (stringCodec) DecodeResult(b []byte) (any, error) {
	var in struct{ V, Err string }
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	if in.Err != "" {
		return in.V, errors.New(in.Err)
	}
	return in.V, nil
}

// TestLeaderRefusesForwardedUnknownCommand: mid rolling upgrade, a follower
// of a newer version forwards a command whose type the leader's binary
// does not know. The leader refuses it (ErrUnknownToLeader, a 503 for the
// client) instead of proposing it, which would stop its own state machine
// at that entry; the leader keeps applying, and the follower's next write
// of a type both know succeeds. A new type carrying FlagIgnoreUnknown is
// proposed, and skipped by the leader.
func TestLeaderRefusesForwardedUnknownCommand(t *testing.T) {
	const typeNew, typeNewIgnorable fsm.Type = 90, 91
	const key = "unknown-command-test-key"
	da, db := t.TempDir(), t.TempDir()
	ka, kb := openKV(t, da), openKV(t, db)
	defer ka.Close()
	defer kb.Close()
	// Only the follower's binary knows the new types.
	kb.Registry().Register(typeNew, "new", func(*fsm.Tx, fsm.Command) (any, error) { return "new", nil })
	kb.Registry().Register(typeNewIgnorable, "new-ignorable", func(*fsm.Tx, fsm.Command) (any, error) { return "new-ignorable", nil })

	addrA, addrB := freeAddr(t), freeAddr(t)
	a := openNode(t, cluster.Config{NodeID: "a", Dir: filepath.Join(da, "raft"), RaftAddr: addrA,
		Bootstrap: true, ClusterKey: key, Codec: stringCodec{}}, ka)
	defer a.Shutdown()
	b, err := cluster.Open(cluster.Config{NodeID: "b", Dir: filepath.Join(db, "raft"), RaftAddr: addrB,
		ClusterKey: key, Codec: stringCodec{}, Logger: quietLogger()}, kb)
	if err != nil {
		t.Fatalf("open follower: %v", err)
	}
	defer b.Shutdown()
	ctx := applyCtx(t)
	if err := a.AddServer(ctx, "b", addrB, true); err != nil {
		t.Fatalf("add follower: %v", err)
	}
	if err := b.WaitReady(ctx); err != nil {
		t.Fatalf("follower ready: %v", err)
	}
	if _, _, err := b.Apply(ctx, put("before")); err != nil {
		t.Fatalf("forwarded put: %v", err)
	}

	_, idx, err := b.Apply(ctx, fsm.Command{Type: typeNew, Version: 1, Payload: []byte("x")})
	if !errors.Is(err, cluster.ErrUnknownToLeader) {
		t.Fatalf("forwarded unknown type = index %d, %v; want ErrUnknownToLeader", idx, err)
	}
	t.Logf("refused: %v", err)

	// The leader proposes it and skips it: the answer is its skip.
	if _, _, err := b.Apply(ctx, fsm.Command{Type: typeNewIgnorable, Version: 1, Flags: fsm.FlagIgnoreUnknown}); err == nil ||
		err.Error() != fsm.ErrUnknownCommand.Error() {
		t.Fatalf("forwarded ignorable type = %v, want the leader's skip (%v)", err, fsm.ErrUnknownCommand)
	}
	if v, _, err := b.Apply(ctx, put("after")); err != nil || v != "put:after" {
		t.Fatalf("forwarded put after the refusal = %v, %v", v, err)
	}
	if st := a.Storage(); st.Stalled {
		t.Fatalf("the leader stalled: %s", st.StallReason)
	}
	ka.checkFatal(t)
	kb.checkFatal(t)
	rows, _ := ka.rows(t)
	if _, ok := rows["after"]; !ok {
		t.Fatalf("leader rows %v lack the write after the refusal", rows)
	}
}
