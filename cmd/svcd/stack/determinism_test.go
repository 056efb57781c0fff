package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/schema"
)

// TestDeterministicReplay drives a real node with a seeded random mix of
// engine operations (schema changes, record writes that succeed and that
// fail at apply time, settings, admins), part of it concurrent so that Raft
// hands the FSM several commands per SQLite transaction. It then replays
// the node's whole Raft log into two fresh replicas, one in batches of
// random sizes and one entry at a time, and requires byte-identical
// digests: of both replicas and of the node's own database, and the same
// outcome for every command as the proposer saw.
//
// SVCD_DET_SEED=<n> reruns another sequence.
func TestDeterministicReplay(t *testing.T) {
	seed := detSeed(t, 20260611)
	start := time.Now()

	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	w := newDetWorkload(t, node.Domain)
	w.setup()

	// Serial, concurrent (schema changes from one goroutine only), serial.
	w.run(rand.New(rand.NewPCG(seed, 0)), 100, true)
	var wg sync.WaitGroup
	const workers, each = 8, 30
	for g := 1; g <= workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			w.run(rand.New(rand.NewPCG(seed, uint64(g))), each, g <= 2)
		}(g)
	}
	wg.Wait()
	w.run(rand.New(rand.NewPCG(seed, 1000)), 60, true)
	w.finalCollections = collectionNames(node.Engine)

	bs := node.Store.BatchStats()
	t.Logf("workload: %d operations in %v; %s", w.total(), time.Since(start).Round(time.Millisecond), w.summary())
	t.Logf("group commit on the node: %d commands in %d SQLite transactions (p50 %.0f, p99 %.0f)",
		bs.Commands, bs.Batches, bs.P50, bs.P99)
	if bs.Commands <= bs.Batches {
		t.Errorf("no SQLite transaction applied more than one command (%d commands, %d batches): the batched path was not exercised",
			bs.Commands, bs.Batches)
	}
	for _, msg := range w.unexpected {
		t.Errorf("unexpected error: %s", msg)
	}
	for _, want := range []string{"ok", "unique", "if-match", "relation", "not-found", "batch ok", "batch rolled back"} {
		if w.kinds[want] == 0 {
			t.Errorf("the workload produced no %q outcome at apply time; it does not cover what it should", want)
		}
	}
	node.close(t)

	rep := replayCheck(t, dir, seed, 64, w.outcomes)
	if len(rep.digest) < 7 {
		t.Errorf("digest covers only %d tables: %v", len(rep.digest), rep.digest)
	}
	// The replica's engine sees the same collections as the node did.
	if got, want := collectionNames(rep.batched.Engine), w.finalCollections; got != want {
		t.Errorf("replayed engine has collections %s, the node had %s", got, want)
	}
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

func collectionNames(e *engine.Engine) string {
	var names []string
	for _, c := range e.Schema().Collections() {
		var fields []string
		for _, f := range c.Fields {
			fields = append(fields, f.Name+":"+f.Type)
		}
		names = append(names, c.Name+"("+strings.Join(fields, ",")+")")
	}
	return strings.Join(names, " ")
}

// detWorkload is the random operation generator and its bookkeeping.
type detWorkload struct {
	t    *testing.T
	eng  *engine.Engine
	auth *auth.Auth
	ctx  context.Context

	admin engine.Principal

	mu         sync.Mutex
	colls      map[string]string            // logical name -> collection id
	records    map[string]map[string]string // collection id -> record id -> etag
	fieldSeq   int
	outcomes   map[uint64]detOutcome // log index -> what the proposer was told
	kinds      map[string]int        // outcome classes, for coverage
	ops        map[string]int        // operation -> count
	unexpected []string
	n          int

	finalCollections string
}

type detOutcome struct {
	op     string
	result string
}

func newDetWorkload(t *testing.T, dom *stack.Domain) *detWorkload {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &detWorkload{
		t: t, eng: dom.Engine, auth: dom.Auth, ctx: ctx,
		admin:    engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner},
		colls:    map[string]string{},
		records:  map[string]map[string]string{},
		outcomes: map[uint64]detOutcome{},
		kinds:    map[string]int{},
		ops:      map[string]int{},
	}
}

func (w *detWorkload) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *detWorkload) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for k, v := range w.kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	var ops []string
	for k, v := range w.ops {
		ops = append(ops, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(ops)
	return "outcomes " + strings.Join(parts, " ") + "; operations " + strings.Join(ops, " ")
}

// note records one operation's outcome. idx is 0 when the engine refused
// before proposing (validation); otherwise the outcome is what every
// replica must compute again for that index.
func (w *detWorkload) note(op string, idx uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	w.ops[op]++
	if err != nil {
		de := engine.AsError(err)
		if de == nil || de.Kind == engine.KindInternal || de.Kind == engine.KindUnavailable {
			w.unexpected = append(w.unexpected, fmt.Sprintf("%s (index %d): %v", op, idx, err))
		}
	}
	if idx == 0 {
		w.kinds["pre-log"]++
		return
	}
	if prev, dup := w.outcomes[idx]; dup {
		w.unexpected = append(w.unexpected, fmt.Sprintf("index %d reported to both %s and %s", idx, prev.op, op))
	}
	w.outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
	w.kinds[classify(err)]++
}

// classify names the apply-time outcome class of an error.
func classify(err error) string {
	if err == nil {
		return "ok"
	}
	de := engine.AsError(err)
	if de == nil {
		return "other"
	}
	msg := de.Error()
	switch {
	case de.Kind == engine.KindPrecondition:
		return "if-match"
	case de.Kind == engine.KindNotFound:
		return "not-found"
	case strings.Contains(msg, "unique") || strings.Contains(msg, "already exists"):
		return "unique"
	case strings.Contains(msg, "does not exist") || strings.Contains(msg, "relation"):
		return "relation"
	case de.Kind == engine.KindConflict:
		return "conflict"
	}
	return fmt.Sprintf("kind-%d", de.Kind)
}

func (w *detWorkload) must(op string, idx uint64, err error) {
	w.t.Helper()
	w.note(op, idx, err)
	if err != nil {
		w.t.Fatalf("%s: %v", op, err)
	}
}

func (w *detWorkload) setup() {
	_, idx, err := w.auth.Admins().CreateOwner(w.ctx, "owner0@example.com", "correct-horse-battery")
	w.must("setup owner", idx, err)
	_, idx, err = w.eng.PatchSettings(w.ctx, []byte(`{"app.url": "https://svcd.test", "cors.max_age": 300}`))
	w.must("setup settings", idx, err)
	for _, c := range []struct{ name, body string }{
		{"authors", `{"name": "authors", "type": "base", "fields": [
			{"name": "name", "type": "text", "required": true, "max": 60},
			{"name": "email", "type": "email", "unique": true},
			{"name": "age", "type": "number", "integer": true, "min": 0, "max": 150},
			{"name": "active", "type": "bool"},
			{"name": "born", "type": "date"},
			{"name": "tags", "type": "select", "values": ["a", "b", "c", "d"], "multiple": true, "max_select": 3},
			{"name": "meta", "type": "json"},
			{"name": "home", "type": "geoPoint"},
			{"name": "stamp", "type": "autodate", "on_create": true, "on_update": true}]}`},
		{"posts", `{"name": "posts", "type": "base", "history_enabled": true, "fields": [
			{"name": "title", "type": "text", "required": true, "max": 80, "searchable": true},
			{"name": "slug", "type": "text", "unique": true},
			{"name": "author", "type": "relation", "collection": "authors"},
			{"name": "rating", "type": "number", "min": 0, "max": 100},
			{"name": "status", "type": "select", "values": ["draft", "published", "archived"]},
			{"name": "body", "type": "editor", "searchable": true},
			{"name": "published", "type": "date"},
			{"name": "secret", "type": "password"},
			{"name": "emb", "type": "vector", "dimensions": 4}]}`},
		{"notes", `{"name": "notes", "type": "base", "history_enabled": true, "fields": [
			{"name": "label", "type": "text", "searchable": true},
			{"name": "score", "type": "number"},
			{"name": "extra", "type": "json"},
			{"name": "link", "type": "url"},
			{"name": "refs", "type": "relation", "collection": "posts", "multiple": true, "max_select": 3},
			{"name": "flag", "type": "bool"}]}`},
	} {
		col, idx, err := w.eng.Schema().CreateCollection(w.ctx, []byte(c.body))
		w.must("setup collection "+c.name, idx, err)
		w.colls[c.name] = col.ID
		w.records[col.ID] = map[string]string{}
	}
}

// run performs n random operations; schema changes only when schemaOK.
func (w *detWorkload) run(r *rand.Rand, n int, schemaOK bool) {
	for i := 0; i < n; i++ {
		if w.t.Failed() {
			return
		}
		switch p := r.IntN(100); {
		case p < 37:
			w.opCreate(r)
		case p < 42:
			w.opBatch(r)
		case p < 66:
			w.opUpdate(r)
		case p < 78:
			w.opDelete(r)
		case p < 84:
			w.opSettings(r)
		case p < 86:
			w.opOwner(r)
		case p < 90:
			w.opAccess(r)
		case schemaOK:
			w.opSchema(r)
		default:
			w.opCreate(r)
		}
	}
}

func (w *detWorkload) pickCollection(r *rand.Rand) (logical, id string) {
	names := []string{"authors", "posts", "notes"}
	logical = names[r.IntN(len(names))]
	w.mu.Lock()
	defer w.mu.Unlock()
	return logical, w.colls[logical]
}

// pickRecord returns a known record of collection id, or "" if none.
func (w *detWorkload) pickRecord(r *rand.Rand, collID string) (id, etag string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	recs := w.records[collID]
	if len(recs) == 0 {
		return "", ""
	}
	ids := make([]string, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	id = ids[r.IntN(len(ids))]
	return id, recs[id]
}

func (w *detWorkload) remember(collID string, rec *engine.Record) {
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(rec.JSON, &v); err != nil || v.ID == "" {
		w.t.Errorf("record JSON without id: %s", rec.JSON)
		return
	}
	w.mu.Lock()
	w.records[collID][v.ID] = rec.ETag
	w.mu.Unlock()
}

func (w *detWorkload) forget(collID, id string) {
	w.mu.Lock()
	delete(w.records[collID], id)
	w.mu.Unlock()
}

// randID is a well-formed record id (that almost surely does not exist).
func randID(r *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, engine.IDLength)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// value returns a valid input for field f (or nil to leave it out).
func (w *detWorkload) value(r *rand.Rand, f *schema.Field) (any, bool) {
	switch f.Type {
	case schema.FieldText, schema.FieldEditor:
		if f.Unique {
			return fmt.Sprintf("slug-%d", r.IntN(80)), true // collisions on purpose
		}
		s := strings.Join([]string{words[r.IntN(len(words))], words[r.IntN(len(words))], strconv.Itoa(r.IntN(1000))}, " ")
		if f.Type == schema.FieldEditor {
			s = "<p>" + s + "</p>"
		}
		if f.Max != nil && len(s) > int(*f.Max) {
			s = s[:int(*f.Max)]
		}
		return s, true
	case schema.FieldEmail:
		return fmt.Sprintf("user%d@example.com", r.IntN(60)), true
	case schema.FieldURL:
		return fmt.Sprintf("https://example.com/p/%d", r.IntN(1000)), true
	case schema.FieldNumber:
		lo, hi := 0.0, 1000.0
		if f.Min != nil {
			lo = *f.Min
		}
		if f.Max != nil {
			hi = *f.Max
		}
		if f.Integer {
			return int(lo) + r.IntN(int(hi-lo)+1), true
		}
		return round2(lo + r.Float64()*(hi-lo)), true
	case schema.FieldBool:
		return r.IntN(2) == 0, true
	case schema.FieldDate:
		ts := int64(1_500_000_000 + r.IntN(200_000_000))
		if r.IntN(2) == 0 {
			return time.Unix(ts, 0).UTC().Format(time.RFC3339), true
		}
		return ts, true
	case schema.FieldSelect:
		if !f.Multiple {
			return f.Values[r.IntN(len(f.Values))], true
		}
		var out []any
		for _, v := range f.Values {
			if r.IntN(3) == 0 && (f.MaxSelect == 0 || len(out) < f.MaxSelect) {
				out = append(out, v)
			}
		}
		return out, true
	case schema.FieldJSON:
		switch r.IntN(4) {
		case 0:
			return map[string]any{"n": r.IntN(100), "w": words[r.IntN(len(words))], "nested": map[string]any{"z": 1, "a": []any{true, nil}}}, true
		case 1:
			return []any{r.IntN(10), "x", 2.5}, true
		case 2:
			return words[r.IntN(len(words))], true
		default:
			return round2(r.Float64() * 50), true
		}
	case schema.FieldGeoPoint:
		return map[string]any{"lon": round2(r.Float64()*360 - 180), "lat": round2(r.Float64()*180 - 90)}, true
	case schema.FieldVector:
		vec := make([]any, f.Dimensions)
		for i := range vec {
			vec[i] = round2(r.Float64()*2 - 1)
		}
		return vec, true
	case schema.FieldPassword:
		return fmt.Sprintf("pw-%d-abcdefgh", r.IntN(1000)), true
	case schema.FieldRelation:
		pick := func() string {
			if id, _ := w.pickRecord(r, f.Collection); id != "" && r.IntN(10) < 8 {
				return id
			}
			return randID(r) // a record that does not exist: fails at apply time
		}
		if !f.Multiple {
			if r.IntN(8) == 0 {
				return "", true
			}
			return pick(), true
		}
		n := r.IntN(4)
		if f.MaxSelect > 0 {
			n = min(n, f.MaxSelect)
		}
		ids := make([]any, n)
		for i := range ids {
			ids[i] = pick()
		}
		return ids, true
	}
	return nil, false // autodate, file: not set by clients
}

// invalid returns an input field f rejects during validation.
func invalid(f *schema.Field) (any, bool) {
	switch f.Type {
	case schema.FieldNumber:
		return "not a number", true
	case schema.FieldSelect:
		return "no-such-value", true
	case schema.FieldEmail:
		return "not-an-email", true
	case schema.FieldDate:
		return "not a date", true
	case schema.FieldRelation:
		return "NOT_AN_ID", true
	case schema.FieldGeoPoint:
		return "here", true
	case schema.FieldVector:
		return []any{"x"}, true
	case schema.FieldText:
		if f.Required {
			return "", true
		}
	}
	return nil, false
}

// body builds a record body over some of c's fields.
func (w *detWorkload) body(r *rand.Rand, c *schema.Collection, partial bool) map[string]any {
	m := map[string]any{}
	for _, f := range c.Fields {
		if partial && r.IntN(3) != 0 {
			continue
		}
		if !partial && !f.Required && r.IntN(6) == 0 {
			continue
		}
		if v, ok := w.value(r, f); ok {
			m[f.Name] = v
		}
	}
	if len(c.Fields) > 0 && r.IntN(12) == 0 { // a validation failure: never reaches the log
		f := c.Fields[r.IntN(len(c.Fields))]
		if v, ok := invalid(f); ok {
			m[f.Name] = v
		}
	}
	return m
}

func (w *detWorkload) opCreate(r *rand.Rand) {
	logical, id := w.pickCollection(r)
	c, err := w.eng.Schema().Collection(id)
	if err != nil {
		w.t.Errorf("collection %s vanished: %v", logical, err)
		return
	}
	m := w.body(r, c, false)
	op := "create " + logical
	if r.IntN(15) == 0 { // an explicit id, sometimes one that exists
		if rid, _ := w.pickRecord(r, id); rid != "" && r.IntN(2) == 0 {
			m["id"] = rid
			op += " (existing id)"
		} else {
			m["id"] = randID(r)
		}
	}
	b, _ := json.Marshal(m)
	rec, idx, err := w.eng.Records().CreateRecord(w.ctx, w.admin, id, b)
	w.note(op, idx, err)
	if err == nil {
		w.remember(id, rec)
	}
}

func (w *detWorkload) ifMatch(r *rand.Rand, etag string) string {
	switch p := r.IntN(20); {
	case p < 8:
		return ""
	case p < 16:
		return etag // may be stale by now: a mismatch under concurrency
	case p < 17:
		return "*"
	default:
		return `W/"stale-1"`
	}
}

func (w *detWorkload) opUpdate(r *rand.Rand) {
	logical, id := w.pickCollection(r)
	c, err := w.eng.Schema().Collection(id)
	if err != nil {
		w.t.Errorf("collection %s vanished: %v", logical, err)
		return
	}
	rid, etag := w.pickRecord(r, id)
	op := "update " + logical
	if rid == "" || r.IntN(12) == 0 {
		rid, etag = randID(r), ""
		op += " (missing)"
	}
	b, _ := json.Marshal(w.body(r, c, true))
	rec, idx, err := w.eng.Records().UpdateRecord(w.ctx, w.admin, id, rid, b, w.ifMatch(r, etag))
	w.note(op, idx, err)
	if err == nil {
		w.remember(id, rec)
	}
}

func (w *detWorkload) opDelete(r *rand.Rand) {
	logical, id := w.pickCollection(r)
	rid, etag := w.pickRecord(r, id)
	op := "delete " + logical
	if rid == "" || r.IntN(8) == 0 {
		rid, etag = randID(r), ""
		op += " (missing)"
	}
	idx, err := w.eng.Records().DeleteRecord(w.ctx, w.admin, id, rid, w.ifMatch(r, etag))
	w.note(op, idx, err)
	if err == nil {
		w.forget(id, rid)
	}
}

func (w *detWorkload) opSettings(r *rand.Rand) {
	var body string
	switch r.IntN(5) {
	case 0:
		body = fmt.Sprintf(`{"app.url": "https://svcd.test/%d"}`, r.IntN(100))
	case 1:
		body = fmt.Sprintf(`{"x.custom.k%d": "v%d", "x.custom.k%d": null}`, r.IntN(5), r.IntN(100), 5+r.IntN(5))
	case 2:
		body = fmt.Sprintf(`{"cors.max_age": %d, "docs.enabled": %v}`, r.IntN(1000), r.IntN(2) == 0)
	case 3:
		body = `{"cors.max_age": "abc"}` // validation error
	default:
		body = fmt.Sprintf(`{"x.custom.k%d": null}`, r.IntN(10))
	}
	_, idx, err := w.eng.PatchSettings(w.ctx, []byte(body))
	w.note("settings", idx, err)
}

func (w *detWorkload) opOwner(r *rand.Rand) {
	pw := "correct-horse-battery"
	if r.IntN(6) == 0 {
		pw = "short" // validation error
	}
	_, idx, err := w.auth.Admins().CreateOwner(w.ctx, fmt.Sprintf("Owner%d@Example.com", r.IntN(8)), pw)
	w.note("owner", idx, err)
}

// fieldsJSON returns c's fields as generic objects for editing.
func fieldsJSON(c *schema.Collection) []map[string]any {
	b, _ := json.Marshal(c.Fields)
	var out []map[string]any
	json.Unmarshal(b, &out)
	return out
}

func (w *detWorkload) opSchema(r *rand.Rand) {
	w.mu.Lock()
	notesID, authorsID := w.colls["notes"], w.colls["authors"]
	w.fieldSeq++
	seq := w.fieldSeq
	w.mu.Unlock()
	notes, err := w.eng.Schema().Collection(notesID)
	if err != nil {
		w.t.Errorf("notes vanished: %v", err)
		return
	}
	fields := fieldsJSON(notes)
	target, op := notesID, ""
	var body any
	// editable: indexes of notes fields that are not relations.
	var editable []int
	for i, f := range fields {
		if f["type"] != schema.FieldRelation {
			editable = append(editable, i)
		}
	}
	switch k := r.IntN(11); {
	case k == 8:
		w.tempCollection(r, seq)
		return
	case k == 9:
		w.viewCollection(r, seq)
		return
	case k == 10:
		// Referenced by posts.author: refused at apply time.
		idx, err := w.eng.Schema().DeleteCollection(w.ctx, authorsID)
		w.note("schema delete referenced collection", idx, err)
		if err == nil {
			w.t.Errorf("deleting authors, referenced by posts.author, succeeded")
		}
		return
	case k == 0:
		op = "schema rename collection"
		body = map[string]any{"name": fmt.Sprintf("notes_%d", r.IntN(4))}
	case k == 1 && len(editable) > 0:
		op = "schema rename field"
		i := editable[r.IntN(len(editable))]
		name, _ := fields[i]["name"].(string)
		base, _, _ := strings.Cut(name, "_")
		fields[i]["name"] = fmt.Sprintf("%s_%d", base, r.IntN(3))
		body = map[string]any{"fields": fields}
	case k == 2 || len(editable) == 0:
		op = "schema add field"
		types := []map[string]any{
			{"type": "text"}, {"type": "number"}, {"type": "bool"}, {"type": "json"}, {"type": "date"},
			{"type": "url"}, {"type": "select", "values": []string{"p", "q"}}, {"type": "text", "unique": true},
			{"type": "text", "searchable": true},
		}
		f := types[r.IntN(len(types))]
		f["name"] = fmt.Sprintf("x%d", seq)
		body = map[string]any{"fields": append(fields, f)}
	case k == 3:
		op = "schema remove field"
		var kept []map[string]any
		removed := false
		for _, f := range fields {
			if name, _ := f["name"].(string); !removed && strings.HasPrefix(name, "x") {
				removed = true
				continue
			}
			kept = append(kept, f)
		}
		if !removed && len(kept) > 0 {
			kept = kept[:len(kept)-1] // drop the last field (whatever it is)
		}
		body = map[string]any{"fields": kept}
	case k == 4 || k == 5:
		op = "schema retype field"
		i := editable[r.IntN(len(editable))]
		types := []string{"text", "number", "json", "bool", "date", "url"}
		fields[i]["type"] = types[r.IntN(len(types))]
		body = map[string]any{"fields": fields}
	case k == 6:
		op = "schema toggle unique"
		if r.IntN(2) == 0 {
			authors, err := w.eng.Schema().Collection(authorsID)
			if err != nil {
				w.t.Errorf("authors vanished: %v", err)
				return
			}
			target, fields = authorsID, fieldsJSON(authors)
			for _, f := range fields {
				if f["name"] == "age" || f["name"] == "active" {
					f["unique"] = !(f["unique"] == true)
				}
			}
		} else {
			i := editable[r.IntN(len(editable))]
			fields[i]["unique"] = !(fields[i]["unique"] == true)
		}
		body = map[string]any{"fields": fields}
	default:
		op = "schema rules"
		rules := []any{nil, ""}
		body = map[string]any{"view_rule": rules[r.IntN(2)], "update_rule": rules[r.IntN(2)]}
	}
	b, _ := json.Marshal(body)
	_, idx, err := w.eng.Schema().UpdateCollection(w.ctx, target, b)
	w.note(op, idx, err)
}

// tempCollection creates a collection, writes to it and drops it again.
func (w *detWorkload) tempCollection(r *rand.Rand, seq int) {
	name := fmt.Sprintf("tmp_%d", seq)
	body := fmt.Sprintf(`{"name": %q, "fields": [
		{"name": "a", "type": "text", "unique": true},
		{"name": "n", "type": "number"},
		{"name": "post", "type": "relation", "collection": "posts"}]}`, name)
	c, idx, err := w.eng.Schema().CreateCollection(w.ctx, []byte(body))
	w.note("schema create temp collection", idx, err)
	if err != nil {
		return
	}
	for i := 0; i < 1+r.IntN(4); i++ {
		b, _ := json.Marshal(map[string]any{"a": fmt.Sprintf("v%d", r.IntN(3)), "n": r.IntN(10)})
		_, idx, err := w.eng.Records().CreateRecord(w.ctx, w.admin, c.ID, b)
		w.note("create temp", idx, err)
	}
	if r.IntN(4) == 0 {
		return // left in place
	}
	idx, err = w.eng.Schema().DeleteCollection(w.ctx, c.ID)
	w.note("schema delete temp collection", idx, err)
}

// viewCollection creates a view collection over authors, and sometimes
// changes or drops it.
func (w *detWorkload) viewCollection(r *rand.Rand, seq int) {
	name := fmt.Sprintf("v_%d", seq)
	body := fmt.Sprintf(`{"name": %q, "type": "view", "view_query": "SELECT id, name, age, created FROM authors WHERE age > %d"}`, name, r.IntN(100))
	c, idx, err := w.eng.Schema().CreateCollection(w.ctx, []byte(body))
	w.note("schema create view", idx, err)
	if err != nil {
		return
	}
	switch r.IntN(3) {
	case 0:
		b := fmt.Sprintf(`{"view_query": "SELECT id, email, active FROM authors WHERE age < %d"}`, r.IntN(100))
		_, idx, err = w.eng.Schema().UpdateCollection(w.ctx, c.ID, []byte(b))
		w.note("schema update view", idx, err)
	case 1:
		idx, err = w.eng.Schema().DeleteCollection(w.ctx, c.ID)
		w.note("schema delete view", idx, err)
	}
}
