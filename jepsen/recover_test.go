package jepsen_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// recoverScript is the command of docs/operations.md ("A cluster that lost
// its quorum"), run as printed there on the stopped survivor: DIR is its
// data directory, ID its node id, RAFT its Raft address.
const recoverScript = `svcd repair recover --dir "$DIR" --node-id "$ID" --members "$ID=$RAFT"
`

// TestRecoverLostQuorum: two of three nodes are lost for good; the survivor
// has no quorum and takes no write. svcd repair recover on the stopped
// survivor makes it a one-voter cluster: at its start it leads, holds
// every acknowledged write, takes writes; a new node joins it and reaches
// the same digest.
func TestRecoverLostQuorum(t *testing.T) {
	skipShort(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	c := harness.StartCluster(t, 3, harness.ClusterOptions{})
	n1 := c.Node("n1")
	admin := c.Admin(n1)
	createItems(t, admin)
	// Writes go to every node: each must know the collection first (a
	// follower validates a write against its own schema, and answers 404
	// for a collection it has not applied yet).
	if _, err := c.Converge(30 * time.Second); err != nil {
		t.Fatalf("converge after the collection: %v", err)
	}
	w := newAckedWriter(t)
	for i := range 30 {
		w.create(c.Admin(c.Nodes()[i%3]), "recseq"+strings.Repeat("0", 7)+string(rune('a'+i%26))+string(rune('a'+i/26)), "recover")
	}
	c.Converge(30 * time.Second)
	c.Forget("n2")
	c.Forget("n3")
	// Without a quorum the survivor refuses writes (503), never loses one.
	cl := c.Admin(n1)
	cl.Timeout = 15 * time.Second
	resp, err := cl.Do(context.Background(), "POST", "/api/v1/items", map[string]any{"seq": 1})
	if err == nil && resp.Status != 503 {
		t.Fatalf("a write without a quorum: %s", resp)
	}
	c.Stop(t, "n1")
	out := runScript(t, n1, recoverScript, "DIR="+n1.DataDir(), "ID=n1", "RAFT="+c.RaftAddr("n1"))
	if !strings.Contains(out, "recovered: this node (n1)") {
		t.Fatalf("recover:\n%s", out)
	}
	t.Logf("recover: %s", strings.TrimSpace(out))
	c.Restart(t, "n1")
	if l := c.MustLeader(t, 30*time.Second); l != n1 {
		t.Fatalf("leader %s, want the survivor", l.Name)
	}
	w.checkAll(c, n1)
	w.create(c.Admin(n1), "recafter0000001", "recover")
	c.AddNode(t, "n4")
	d, err := c.Converge(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w.checkAll(c, c.Node("n4"))
	t.Logf("the recovered cluster of n1 and n4 agrees at index %d", d.AppliedIndex)
}
