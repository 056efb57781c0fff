package api_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// Benchmarks of server-side JavaScript over HTTP against a real node on
// loopback (docs/benchmarks.md, "JavaScript"): the cost a before-hook
// adds to a record create, and a custom route's requests per second
// against a plain record get. They print figures and never fail on speed.

// BenchmarkHookCreate: one create per iteration with no hook, one
// before-hook and five, each hook changing the record.
func BenchmarkHookCreate(b *testing.B) {
	for _, hooks := range []int{0, 1, 5} {
		b.Run(fmt.Sprintf("hooks=%d", hooks), func(b *testing.B) {
			s := apitest.Start(b, apitest.Options{})
			s.CreateCollection(b, public(coll("bench", "base", []map[string]any{f("title", "text"), f("n", "number")})))
			for i := range hooks {
				mkHook(b, s, "bench", "beforeCreate", fmt.Sprintf(`record.n = (record.n || 0) + %d; if (record.title === "") helpers.abort("empty")`, i+1))
			}
			url, h := s.URL+"/api/v1/bench", map[string]string{"Content-Type": "application/json"}
			for b.Loop() {
				if st, out, err := post(s.Client, url, `{"title":"t"}`, h); err != nil || st != http.StatusCreated {
					b.Fatalf("create: %d %s %v", st, out, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
	}
}

// BenchmarkRouteVsGet: a custom route that reads a record with
// helpers.find against GET of the same record, one client.
func BenchmarkRouteVsGet(b *testing.B) {
	s := apitest.Start(b, apitest.Options{})
	s.CreateCollection(b, public(coll("bench", "base", []map[string]any{f("title", "text")})))
	id := s.CreateRecord(b, "bench", map[string]any{"title": "t"})["id"].(string)
	mkRoute(b, s, "GET", "rec/:id", `return helpers.find("bench", params.id)`)
	for _, c := range []struct{ name, path string }{
		{"get", "/api/v1/bench/" + id},
		{"route", "/api/v1/custom/rec/" + id},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := s.URL + c.path
			for b.Loop() {
				res, err := s.Client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", c.path, res.StatusCode)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
