package stack_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/files"
	"svcd/fsm"
)

// TestDeterministicReplayFiles drives the files module's commands (uploads
// to single and multiple fields, multipart creates and updates, deletes of
// one and of all files, record deletes, a field removed, one-time token
// spends, history restores that bring removed files back, some of them
// refused at apply time: a required file field emptied) into a node, then replays
// its log into two fresh replicas and requires identical digests: the
// metadata, the tombstones and the spent tokens are the same on every
// replica, whatever the batching.
func TestDeterministicReplayFiles(t *testing.T) {
	seed := detSeed(t, 20261126)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
	if _, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"docs_f","type":"base","view_rule":"","update_rule":"",
		"fields":[{"name":"title","type":"text","unique":true},{"name":"one","type":"file"},{"name":"many","type":"file","multiple":true},
		{"name":"gone","type":"file","multiple":true},{"name":"must","type":"file","required":true}]}`)); err != nil {
		t.Fatal(err)
	}
	outcomes := map[uint64]detOutcome{}
	var mu sync.Mutex
	var records []string
	note := func(op string, idx uint64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if idx > 0 {
			outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
		}
	}
	fm := node.Files
	run := func(r *rand.Rand, n int) {
		for i := 0; i < n; i++ {
			mu.Lock()
			var rec string
			if len(records) > 0 {
				rec = records[r.IntN(len(records))]
			}
			mu.Unlock()
			switch k := r.IntN(8); {
			case k == 0 || rec == "":
				title := fmt.Sprintf("t%d", r.IntN(40)) // some collide: unique violations at apply time
				got, idx, err := fm.CreateRecord(ctx, admin, "docs_f", detParts(r, "title", title, "one", "many", "many", "gone", "must"))
				note("create", idx, err)
				if err == nil {
					mu.Lock()
					records = append(records, string(bytes.SplitN(got.JSON, []byte(`"`), 5)[3]))
					mu.Unlock()
				}
			case k == 1:
				_, idx, err := fm.Upload(ctx, admin, "docs_f", rec, "one", detParts(r, "file"))
				note("upload one", idx, err)
			case k == 2:
				_, idx, err := fm.Upload(ctx, admin, "docs_f", rec, "many", detParts(r, "file", "file"))
				note("upload many", idx, err)
			case k == 3:
				_, idx, err := fm.UpdateRecord(ctx, admin, "docs_f", rec, detParts(r, "title", fmt.Sprintf("u%d", r.IntN(40)), "many+"), "")
				note("update", idx, err)
			case k == 4:
				_, idx, err := fm.DeleteAll(ctx, admin, "docs_f", rec, "many")
				note("delete all", idx, err)
			case k == 5:
				idx, err := fm.Delete(ctx, admin, "docs_f", rec, "many", "00000000-0000-4000-8000-000000000000.txt")
				note("delete missing", idx, err)
			case k == 6 && r.IntN(3) == 0:
				idx, err := node.Engine.Records().DeleteRecord(ctx, admin, "docs_f", rec, "")
				note("delete record", idx, err)
			case k == 6:
				_, idx, err := fm.DeleteAll(ctx, admin, "docs_f", rec, "must")
				note("empty a required field", idx, err)
			default:
				_, idx, err := node.Engine.Records().UpdateRecord(ctx, admin, "docs_f", rec, []byte(`{"one":null}`), "")
				note("clear one", idx, err)
			}
		}
	}
	run(rand.New(rand.NewPCG(seed, 0)), 40)
	var wg sync.WaitGroup
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			run(rand.New(rand.NewPCG(seed, uint64(g))), 25)
		}(g)
	}
	wg.Wait()
	// History restores naming files: the record's own removed files come
	// back (their tombstones go), other records' and unknown names stay
	// gone.
	var removed []string
	removedOf := map[string][]string{} // by record
	if err := node.Store.View(ctx, func(rd *fsm.Reader) error {
		rows, err := rd.Query(`SELECT name, coalesce(record_id, '') FROM _svc_files_deleted ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n, rec string
			if err := rows.Scan(&n, &rec); err != nil {
				return err
			}
			removed = append(removed, n)
			removedOf[rec] = append(removedOf[rec], n)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	restores := rand.New(rand.NewPCG(seed, 99))
	broughtBack := 0
	for i := 0; i < 20 && len(removed) > 0; i++ {
		rec := records[restores.IntN(len(records))]
		pick := func() string {
			if own := removedOf[rec]; len(own) > 0 && restores.IntN(2) == 0 {
				return own[restores.IntN(len(own))]
			}
			return removed[restores.IntN(len(removed))]
		}
		var many []string
		for j := restores.IntN(4); j > 0; j-- {
			many = append(many, pick())
		}
		names := map[string][]string{"many": many, "one": {pick()}}
		_, missing, idx, err := fm.RestoreRecord(ctx, admin, "docs_f", rec, map[string]any{"title": fmt.Sprintf("r%d", i)}, names, "")
		note("restore", idx, err)
		if err == nil {
			broughtBack += len(many) + 1 - len(missing["many"]) - len(missing["one"])
		}
	}
	if broughtBack == 0 {
		t.Errorf("no restore brought a removed file back")
	}
	t.Logf("restores brought %d removed files back", broughtBack)
	// A file field removed: its files become tombstones in the same
	// command as the schema change.
	if _, _, err := node.Engine.Schema().UpdateCollection(ctx, "docs_f", []byte(`{"fields":[{"name":"title","type":"text","unique":true},
		{"name":"one","type":"file"},{"name":"many","type":"file","multiple":true}]}`)); err != nil {
		t.Fatal(err)
	}
	node.close(t)
	kinds := map[string]int{}
	for _, o := range outcomes {
		kinds[o.op+": "+o.result]++
	}
	t.Logf("outcomes: %v", kinds)
	for _, want := range []string{"create: ok", "upload one: ok", "upload many: ok", "update: ok", "delete all: ok", "delete record: ok", "restore: ok"} {
		if kinds[want] == 0 {
			t.Errorf("no %q in the workload", want)
		}
	}
	rep := replayCheck(t, dir, seed, 16, outcomes)
	for _, table := range []string{"table:_svc_files", "table:_svc_files_deleted"} {
		if rep.digest[table] == "" {
			t.Errorf("the digest has no %s: %v", table, rep.digest)
		}
	}
}

// detParts is a multipart form of the named parts: a name followed by a
// value is a plain value when it is "title", every other name is a file.
func detParts(r *rand.Rand, names ...string) files.Parts {
	var parts []*files.Part
	for i := 0; i < len(names); i++ {
		if names[i] == "title" && i+1 < len(names) {
			parts = append(parts, &files.Part{Name: "title", Body: bytes.NewReader([]byte(names[i+1]))})
			i++
			continue
		}
		content := bytes.Repeat([]byte{byte('a' + r.IntN(26))}, 1+r.IntN(64))
		parts = append(parts, &files.Part{Name: names[i], FileName: "f.txt", MIME: "text/plain", Body: bytes.NewReader(content)})
	}
	return &detPartList{parts: parts}
}

type detPartList struct{ parts []*files.Part }

func (l *detPartList) Next() (*files.Part, error) {
	if len(l.parts) == 0 {
		return nil, io.EOF
	}
	p := l.parts[0]
	l.parts = l.parts[1:]
	return p, nil
}
