package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/password"
)

// TestCreateAnswerIsTheStoredRecord: a create answers (and hands to
// events and hooks) the row it built from the command, not one read back
// from SQLite, so that row must be what SQLite stored, value for value,
// in every field type and for values that SQLite's column affinity would
// change: single creates, batch creates and both, compared with a read of
// the record afterwards.
func TestCreateAnswerIsTheStoredRecord(t *testing.T) {
	st, err := stack.Open(stack.Config{
		DataDir:        t.TempDir(),
		EncryptionKey:  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		PasswordParams: password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	owner := engine.Principal{Kind: engine.AdminPrincipal, Role: engine.RoleOwner}
	mustCreate := func(def string) {
		if _, _, err := st.Engine.Schema().CreateCollection(ctx, []byte(def)); err != nil {
			t.Fatalf("create collection: %v", err)
		}
	}
	mustCreate(`{"name":"targets","fields":[{"name":"t","type":"text"}]}`)
	target, _, err := st.Engine.Records().CreateRecord(ctx, owner, "targets", []byte(`{"t":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	var tgt struct{ ID string }
	json.Unmarshal(target.JSON, &tgt)
	mustCreate(`{"name":"every","create_rule":"","view_rule":"","fields":[
		{"name":"text","type":"text"},{"name":"secret","type":"text","encrypted":true},
		{"name":"num","type":"number"},{"name":"int","type":"number","integer":true},
		{"name":"flag","type":"bool"},{"name":"email","type":"email"},{"name":"url","type":"url"},
		{"name":"date","type":"date"},{"name":"one","type":"select","values":["a","b"]},
		{"name":"many","type":"select","values":["a","b","c"],"multiple":true},
		{"name":"doc","type":"json"},{"name":"rich","type":"editor"},
		{"name":"ref","type":"relation","collection":"targets"},
		{"name":"refs","type":"relation","collection":"targets","multiple":true},
		{"name":"at","type":"autodate","on_create":true},{"name":"geo","type":"geoPoint"},
		{"name":"vec","type":"vector","dimensions":3}]}`)
	bodies := []string{
		`{}`,
		`{"text":"héllo","secret":"s3","num":5,"int":7,"flag":true,"email":"a@b.co","url":"https://x.test/p?q=1",
		  "date":"2026-11-26 10:00:00.000Z","one":"b","many":["c","a"],"doc":{"k":[1,2.5,"x",null,true]},"rich":"<p>x</p>",
		  "ref":"` + tgt.ID + `","refs":["` + tgt.ID + `"],"geo":{"lon":2.35,"lat":48.85},"vec":[0.5,-1,3]}`,
		`{"num":5.0,"int":-0,"flag":false,"doc":1e21,"vec":[1e-7,0,1]}`,
		`{"num":1e20,"int":9007199254740993,"doc":"just text","text":""}`,
		`{"num":-2.5e-300,"int":0,"doc":[],"many":[]}`,
	}
	check := func(how string, answer []byte) {
		t.Helper()
		var rec struct{ ID string }
		if err := json.Unmarshal(answer, &rec); err != nil || rec.ID == "" {
			t.Fatalf("%s: answer %s", how, answer)
		}
		got, err := st.Engine.Records().GetRecord(ctx, owner, "every", rec.ID, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.JSON) != string(answer) {
			t.Errorf("%s: the create answered\n%s\nbut the stored record reads\n%s", how, answer, got.JSON)
		}
	}
	var ops []engine.BatchOp
	for i, body := range bodies {
		rec, _, err := st.Engine.Records().CreateRecord(ctx, owner, "every", []byte(body))
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		check(fmt.Sprintf("create %d", i), rec.JSON)
		ops = append(ops, engine.BatchOp{Action: engine.BatchCreate, Collection: "every", Body: []byte(body)})
	}
	res, _, err := st.Engine.Records().Batch(ctx, owner, ops)
	if err != nil {
		t.Fatal(err)
	}
	for i, item := range res.Items {
		check(fmt.Sprintf("batch entry %d", i), item.Body)
	}
}
