package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/password"
)

var benchOwner = engine.Principal{Kind: engine.AdminPrincipal, Role: engine.RoleOwner}

func benchStack(b *testing.B) *stack.Stack {
	b.Helper()
	st, err := stack.Open(stack.Config{
		DataDir:        b.TempDir(),
		PasswordParams: password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.WaitReady(context.Background()); err != nil {
		b.Fatal(err)
	}
	return st
}

func mustJSON(v any) []byte {
	out, _ := json.Marshal(v)
	return out
}

// fill creates n records from body(i) with 32 concurrent writers.
func fill(b *testing.B, st *stack.Stack, coll string, n int, body func(i int) map[string]any) []string {
	b.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				rec, _, err := st.Engine.Records().CreateRecord(context.Background(), benchOwner, coll, mustJSON(body(i)))
				if err != nil {
					errs <- err
					return
				}
				var m struct{ ID string }
				json.Unmarshal(rec.JSON, &m)
				ids[i] = m.ID
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return ids
}

func createColl(b *testing.B, st *stack.Stack, def map[string]any) {
	b.Helper()
	if _, _, err := st.Engine.Schema().CreateCollection(context.Background(), mustJSON(def)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkListFilter100k: one page of 30 (with totals) of a two-condition
// filter over 100,000 records, without and then with an index on the
// selective field.
func BenchmarkListFilter100k(b *testing.B) {
	st := benchStack(b)
	createColl(b, st, map[string]any{"name": "items", "view_rule": "", "fields": []map[string]any{
		{"name": "n", "type": "number"}, {"name": "cat", "type": "text"}}})
	fill(b, st, "items", 100000, func(i int) map[string]any {
		return map[string]any{"n": i % 1000, "cat": fmt.Sprintf("c%d", i%7)}
	})
	q := engine.ListQuery{PerPage: 30, Filter: `n = 500 && cat = "c3"`}
	run := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			l, err := st.Engine.Records().ListRecords(context.Background(), engine.Principal{}, "items", q)
			if err != nil || l.TotalItems == 0 {
				b.Fatalf("list: %v %+v", err, l)
			}
		}
	}
	b.Run("no-index", run)
	if _, _, err := st.Engine.Schema().CreateIndex(context.Background(), "items", "n", false); err != nil {
		b.Fatal(err)
	}
	b.Run("index-on-n", run)
}

// BenchmarkKeysetPage: the latency of page 1 and of page 1000 (30 per
// page) by cursor, against page 1000 by offset.
func BenchmarkKeysetPage(b *testing.B) {
	st := benchStack(b)
	createColl(b, st, map[string]any{"name": "items", "view_rule": "", "fields": []map[string]any{{"name": "n", "type": "number"}}})
	fill(b, st, "items", 31000, func(i int) map[string]any { return map[string]any{"n": i} })
	ctx := context.Background()
	cursors := []string{""}
	for len(cursors) < 1000 {
		l, err := st.Engine.Records().ListRecords(ctx, engine.Principal{}, "items", engine.ListQuery{PerPage: 30, CursorMode: true, Cursor: cursors[len(cursors)-1], SkipTotal: true})
		if err != nil || l.NextCursor == "" {
			b.Fatalf("walk: %v", err)
		}
		cursors = append(cursors, l.NextCursor)
	}
	for _, page := range []int{1, 1000} {
		b.Run(fmt.Sprintf("cursor-page-%d", page), func(b *testing.B) {
			q := engine.ListQuery{PerPage: 30, CursorMode: true, Cursor: cursors[page-1], SkipTotal: true}
			for i := 0; i < b.N; i++ {
				if _, err := st.Engine.Records().ListRecords(ctx, engine.Principal{}, "items", q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("offset-page-1000", func(b *testing.B) {
		q := engine.ListQuery{PerPage: 30, Page: 1000, SkipTotal: true}
		for i := 0; i < b.N; i++ {
			if _, err := st.Engine.Records().ListRecords(ctx, engine.Principal{}, "items", q); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkExpandNested: a page of 30 posts expanding author and the
// author's company (two levels of relations).
func BenchmarkExpandNested(b *testing.B) {
	st := benchStack(b)
	createColl(b, st, map[string]any{"name": "companies", "view_rule": "", "fields": []map[string]any{{"name": "name", "type": "text"}}})
	createColl(b, st, map[string]any{"name": "authors", "view_rule": "", "fields": []map[string]any{
		{"name": "name", "type": "text"}, {"name": "company", "type": "relation", "collection": "companies"}}})
	createColl(b, st, map[string]any{"name": "posts", "view_rule": "", "fields": []map[string]any{
		{"name": "title", "type": "text"}, {"name": "author", "type": "relation", "collection": "authors"}}})
	companies := fill(b, st, "companies", 10, func(i int) map[string]any { return map[string]any{"name": fmt.Sprint("co", i)} })
	authors := fill(b, st, "authors", 30, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprint("a", i), "company": companies[i%10]}
	})
	fill(b, st, "posts", 300, func(i int) map[string]any {
		return map[string]any{"title": fmt.Sprint("p", i), "author": authors[i%30]}
	})
	q := engine.ListQuery{PerPage: 30, Expand: "author.company"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := st.Engine.Records().ListRecords(context.Background(), engine.Principal{}, "posts", q); err != nil {
			b.Fatal(err)
		}
	}
}
