package suite

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"svcd/jepsen/harness"
)

// Corrupt damages a stopped follower's Raft log and checks that the damage
// is detected and repaired, never applied. A canary (a setting with a
// unique value) is written through the leader and applied by a follower;
// the follower is stopped, one letter of the canary's value is changed in
// its raft.db, and its start must be refused (exit status 1, naming the
// damaged entry and `svcd repair reseed`), not applied and not a panic.
// `svcd repair reseed` then moves its state aside, and the restarted
// member rejoins from the leader. The run's end requires, as for every
// fault, equal digests on every node and every acknowledged write.
type Corrupt struct{}

func (Corrupt) Name() string { return "corrupt" }

func (Corrupt) Inject(ctx context.Context, env *Env) (func() error, error) {
	leader, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return nil, err
	}
	var victim *harness.Node
	for _, nd := range env.C.Running() {
		// A member that joined (not the one that bootstrapped) knows
		// where to rejoin.
		if nd != leader && slices.Contains(nd.Args, "--join") {
			victim = nd
			break
		}
	}
	if victim == nil {
		return nil, errors.New("no follower that joined runs")
	}
	b := make([]byte, 12)
	rand.Read(b)
	canary := "canary-" + hex.EncodeToString(b)
	resp, err := env.C.Admin(leader).Do(ctx, "PATCH", "/api/v1/admin/settings", map[string]any{"jepsen.canary": canary})
	if err != nil || resp.Status != http.StatusOK {
		return nil, fmt.Errorf("write the canary: %v %v", resp, err)
	}
	// A read there that waits for the canary's index proves the victim
	// applied it (so it is in its log, not only the leader's).
	if r, err := env.C.Admin(victim).MinIndex(resp.Index()).Do(ctx, "GET", "/api/v1/admin/settings", nil); err != nil || r.Status != http.StatusOK ||
		!strings.Contains(string(r.Body), canary) {
		return nil, fmt.Errorf("%s did not apply the canary: %v %v", victim.Name, r, err)
	}
	heal := func() error { return env.C.TryRestart(env.T, victim.Name) }
	if err := victim.Stop(); err != nil {
		return heal, err // it has been killed: restart it
	}
	logPath := filepath.Join(victim.DataDir(), "raft", "raft.db")
	n, err := damage(logPath, []byte(canary), len("canary-")+3)
	if err != nil {
		return heal, err
	}
	env.logf("corrupt: one letter of a log entry changed in %d place(s) of %s's raft.db", n, victim.Name)
	victim.Restart(env.T)
	deadline := time.Now().Add(30 * time.Second)
	for victim.Running() {
		if time.Now().After(deadline) {
			return func() error { return nil }, fmt.Errorf("%s started on a damaged log and still runs", victim.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := victim.ReadLog()
	if i := bytes.LastIndex(log, []byte("=== harness: start #")); i >= 0 {
		log = log[i:]
	}
	if err := victim.ExitErr(); err == nil || !strings.Contains(err.Error(), "exit status 1") ||
		!bytes.Contains(log, []byte("svcd repair reseed")) || bytes.Contains(log, []byte("panic:")) {
		return heal, fmt.Errorf("%s on a damaged log: exit %v, log:\n%s", victim.Name, victim.ExitErr(), log)
	}
	// The members the victim was started with (its --join) may have been
	// retired since: the repair names the ones that run now, as its
	// operator would, and the rejoin tries them after --join.
	var urls []string
	for _, nd := range env.C.Running() {
		if nd != victim {
			urls = append(urls, nd.URL())
		}
	}
	out, err := victim.Command(ctx, "repair", "reseed", "--join", strings.Join(urls, ","))
	if err != nil {
		return heal, fmt.Errorf("svcd repair reseed on %s: %v:\n%s", victim.Name, err, out)
	}
	env.logf("corrupt: %s refused to start at the damaged entry; reseeded", victim.Name)
	return heal, nil
}

// damage changes the byte at offset within every occurrence of needle in
// the file (the live entry, and the copies bbolt leaves in free pages).
func damage(path string, needle []byte, offset int) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], needle)
		if j < 0 {
			break
		}
		b[i+j+offset] ^= 0x20
		i += j + 1
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("the canary is not in %s", path)
	}
	return n, os.WriteFile(path, b, 0o600)
}
