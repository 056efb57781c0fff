package jepsen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

const (
	crashWriters  = 8
	crashKills    = 5
	crashMinDelay = 300 * time.Millisecond
	crashMaxDelay = 1500 * time.Millisecond
	// crashTail is how long the writers keep going after the last restart.
	crashTail = time.Second
	// crashMinAcked keeps the test from passing vacuously.
	crashMinAcked = 300
	// crashWriteTimeout is longer than the server's own 5 s leader wait,
	// so a write to a node without a leader gets its 503.
	crashWriteTimeout = 8 * time.Second
)

// crashSeed is JEPSEN_SEED when set, a fresh seed otherwise.
func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv("JEPSEN_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("JEPSEN_SEED: %v", err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// writeID is a record id of 15 characters of [a-z0-9], unique by
// construction: "w", the writer (base 36), its attempt counter (8 base-36
// digits), and 5 random characters.
func writeID(writer, attempt int, rng *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('w')
	b.WriteByte(idAlphabet[26+writer%10])
	ctr := strconv.FormatUint(uint64(attempt), 36)
	b.WriteString(strings.Repeat("0", 8-len(ctr)))
	b.WriteString(ctr)
	for range 5 {
		b.WriteByte(idAlphabet[rng.IntN(len(idAlphabet))])
	}
	return b.String()
}

// sent is what a writer sent for one id.
type sent struct {
	seq    int64
	writer string
}

// writerLog is one writer's history.
type writerLog struct {
	acked         map[string]sent // 2xx
	indeterminate map[string]sent // no answer, 503, or an unexpected status
	taken         map[string]sent // 422 with details.id: the server says the id exists
	ackedByEpoch  map[int64]int   // epoch = number of kills before the ack
	statuses      map[string]int  // outcome label -> count
	samples       []string        // first few unexpected answers
}

func newWriterLog() *writerLog {
	return &writerLog{
		acked: map[string]sent{}, indeterminate: map[string]sent{}, taken: map[string]sent{},
		ackedByEpoch: map[int64]int{}, statuses: map[string]int{},
	}
}

// runWriter creates records as fast as it can until stop is set (it then
// finishes the request in flight, so that nothing it sent is still being
// applied when the history is checked) or ctx ends (abort). Every attempt
// uses a new id, so a write whose outcome is unknown is never retried under
// the same id.
func runWriter(ctx context.Context, stop *atomic.Bool, c *harness.Client, w int, seed uint64, seq, epoch *atomic.Int64, log *writerLog) {
	rng := rand.New(rand.NewPCG(seed, uint64(w)+1))
	name := fmt.Sprintf("w%d", w)
	for attempt := 0; ctx.Err() == nil && !stop.Load(); attempt++ {
		id := writeID(w, attempt, rng)
		s := sent{seq: seq.Add(1), writer: name}
		ep := epoch.Load()
		resp, err := c.Do(ctx, "POST", "/api/v1/items", map[string]any{"id": id, "seq": s.seq, "writer": s.writer})
		switch {
		case err != nil:
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				log.statuses["aborted"]++
			} else {
				log.statuses["connection error"]++
			}
			log.indeterminate[id] = s
			pause(ctx, 10*time.Millisecond)
		case resp.Status >= 200 && resp.Status < 300:
			log.acked[id] = s
			log.ackedByEpoch[ep]++
			log.statuses[strconv.Itoa(resp.Status)]++
		case resp.Status == http.StatusServiceUnavailable:
			log.indeterminate[id] = s
			log.statuses["503"]++
			pause(ctx, 10*time.Millisecond)
		case resp.Status == http.StatusUnprocessableEntity && resp.APIError().Details["id"] != nil:
			log.taken[id] = s
			log.statuses["422 id taken"]++
		default:
			log.indeterminate[id] = s
			label := strconv.Itoa(resp.Status) + " (unexpected)"
			log.statuses[label]++
			if len(log.samples) < 5 {
				log.samples = append(log.samples, fmt.Sprintf("epoch %d id %s: %s", ep, id, resp))
			}
			pause(ctx, 10*time.Millisecond)
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

type restartStat struct {
	after    time.Duration // writing time before the kill
	ready    time.Duration // restart to /_/ready 200
	attempts int64         // write attempts (all writers) when killed
}

// TestCrashNoAckedWriteLost: 8 writers create records as fast as they can
// while the node is SIGKILLed and restarted 5 times; afterwards every
// acknowledged record is present exactly once.
func TestCrashNoAckedWriteLost(t *testing.T) {
	skipShort(t)
	runCrash(t)
}

// TestCrashDuringSnapshots is the same workload with a snapshot every 64
// entries and a short log tail, so kills land while snapshots are written
// and the log is compacted, and every restart restores a snapshot.
func TestCrashDuringSnapshots(t *testing.T) {
	skipShort(t)
	runCrash(t, snapEnv...)
}

func runCrash(t *testing.T, env ...string) {
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0x6a657073656e))
	delays := make([]time.Duration, crashKills)
	for i := range delays {
		delays[i] = crashMinDelay + time.Duration(rng.Int64N(int64(crashMaxDelay-crashMinDelay)+1))
		delays[i] = delays[i].Round(time.Millisecond)
	}
	t.Logf("seed %d (rerun with JEPSEN_SEED=%d); kill after %v of writing each", seed, seed, delays)

	node := &harness.Node{Name: "n1"}
	node.Start(t, t.TempDir(), env...)
	if len(env) > 0 {
		t.Logf("env %v", env)
	}
	t.Logf("first start ready in %s", waitReady(t, node).Round(time.Millisecond))
	token := node.Setup(t)
	admin := node.Client().WithToken(token)
	createItems(t, admin)

	wc := node.Client().WithToken(token)
	wc.Timeout = crashWriteTimeout
	var seq, epoch atomic.Int64
	var stop atomic.Bool
	logs := make([]*writerLog, crashWriters)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range crashWriters {
		logs[w] = newWriterLog()
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWriter(ctx, &stop, wc, w, seed, &seq, &epoch, logs[w])
		}()
	}
	defer func() { cancel(); wg.Wait() }() // abort on t.Fatal

	began := time.Now()
	stats := make([]restartStat, 0, crashKills)
	for i, d := range delays {
		time.Sleep(d)
		if err := node.Kill(); err != nil {
			t.Fatal(err)
		}
		st := restartStat{after: d, attempts: seq.Load()}
		epoch.Add(1)
		node.Restart(t)
		st.ready = waitReady(t, node)
		stats = append(stats, st)
		t.Logf("kill %d: SIGKILL after %v of writing (%d attempts so far), ready again %v after restart",
			i+1, d, st.attempts, st.ready.Round(time.Millisecond))
	}
	time.Sleep(crashTail)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(began)

	// Merge the writers' histories.
	acked, indeterminate, taken := map[string]sent{}, map[string]sent{}, map[string]sent{}
	byEpoch := map[int64]int{}
	statuses := map[string]int{}
	var samples []string
	for _, l := range logs {
		for id, s := range l.acked {
			acked[id] = s
		}
		for id, s := range l.indeterminate {
			indeterminate[id] = s
		}
		for id, s := range l.taken {
			taken[id] = s
		}
		for e, n := range l.ackedByEpoch {
			byEpoch[e] += n
		}
		for k, n := range l.statuses {
			statuses[k] += n
		}
		samples = append(samples, l.samples...)
	}

	// Read everything back.
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	recs, err := harness.ListAll(rctx, admin, "items", nil)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	count := map[string]int{}
	present := map[string]json.RawMessage{}
	for _, r := range recs {
		count[r.ID]++
		present[r.ID] = r.Raw
	}

	var lost, dups, phantoms, corrupt []string
	for id, n := range count {
		if n != 1 {
			dups = append(dups, fmt.Sprintf("%s x%d", id, n))
		}
		_, a := acked[id]
		_, i := indeterminate[id]
		_, k := taken[id]
		if !a && !i && !k {
			phantoms = append(phantoms, id)
		}
	}
	mustBePresent := map[string]sent{}
	for id, s := range acked {
		mustBePresent[id] = s
	}
	for id, s := range taken { // the server said it exists
		mustBePresent[id] = s
	}
	for id, s := range mustBePresent {
		raw, ok := present[id]
		if !ok {
			lost = append(lost, id)
			continue
		}
		var got struct {
			Seq    json.Number `json:"seq"`
			Writer string      `json:"writer"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Seq.String() != strconv.FormatInt(s.seq, 10) || got.Writer != s.writer {
			corrupt = append(corrupt, fmt.Sprintf("%s: sent seq %d writer %s, got %s", id, s.seq, s.writer, raw))
		}
	}
	indetPresent := 0
	for id := range indeterminate {
		if _, ok := present[id]; ok {
			indetPresent++
		}
	}

	epochs := make([]string, 0, len(byEpoch))
	for e := int64(0); e <= crashKills; e++ {
		epochs = append(epochs, fmt.Sprintf("%d:%d", e, byEpoch[e]))
	}
	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	outcomes := make([]string, 0, len(keys))
	for _, k := range keys {
		outcomes = append(outcomes, fmt.Sprintf("%s=%d", k, statuses[k]))
	}
	var readyTimes []string
	for _, s := range stats {
		readyTimes = append(readyTimes, s.ready.Round(time.Millisecond).String())
	}
	t.Logf("seed %d, %d writers, %d kills over %s", seed, crashWriters, len(stats), elapsed.Round(time.Millisecond))
	t.Logf("acked %d, present %d, indeterminate %d (of which present %d), 422-id-taken %d",
		len(acked), len(recs), len(indeterminate), indetPresent, len(taken))
	t.Logf("acks per epoch (kills before the ack) %s", strings.Join(epochs, " "))
	t.Logf("outcomes %s", strings.Join(outcomes, " "))
	t.Logf("time to ready per restart %s", strings.Join(readyTimes, " "))

	report := func(what string, ids []string) {
		if len(ids) == 0 {
			return
		}
		slices.Sort(ids)
		t.Errorf("%d %s (seed %d): %s", len(ids), what, seed, strings.Join(ids[:min(len(ids), 20)], ", "))
	}
	report("acknowledged writes lost", lost)
	report("ids present more than once", dups)
	report("records present that no client wrote", phantoms)
	report("records whose content differs from what was acknowledged", corrupt)
	if len(taken) > 0 {
		ids := slices.Sorted(maps.Keys(taken))
		t.Logf("ANOMALY: %d fresh ids answered 422 id-taken (ids are unique by construction): %s",
			len(taken), strings.Join(ids[:min(len(ids), 20)], ", "))
	}
	if len(samples) > 0 {
		t.Errorf("unexpected answers to writes (seed %d): %s", seed, strings.Join(samples, "; "))
	}
	if len(acked) < crashMinAcked {
		t.Errorf("only %d acknowledged writes (want at least %d): the test proves little", len(acked), crashMinAcked)
	}
	if byEpoch[crashKills] == 0 {
		t.Errorf("no write acknowledged after the last restart")
	}
}
