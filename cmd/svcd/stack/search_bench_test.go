package stack_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
)

// benchSize reads a record count from env (for smaller trial runs).
func benchSize(env string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	return def
}

// fillBatches creates n records of coll from body(i) through the engine's
// write path: batches of 100 creates (one Raft command each), 8 writers.
func fillBatches(b *testing.B, st *stack.Stack, coll string, n int, body func(i int) map[string]any) {
	b.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	const per = 100
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for lo := w * per; lo < n; lo += 8 * per {
				var ops []engine.BatchOp
				for i := lo; i < min(lo+per, n); i++ {
					ops = append(ops, engine.BatchOp{Action: engine.BatchCreate, Collection: coll, Body: mustJSON(body(i))})
				}
				if _, _, err := st.Engine.Records().Batch(context.Background(), benchOwner, ops); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Logf("filled %d records of %s in %v", n, coll, time.Since(start).Round(time.Second))
}

// latencies runs q b.N times and reports p50 and p99 in milliseconds.
func latencies(b *testing.B, name string, q func(i int)) (p50, p99 float64) {
	b.Helper()
	d := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		q(i)
		d[i] = time.Since(t0)
	}
	b.StopTimer()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	p50 = float64(d[len(d)/2]) / 1e6
	p99 = float64(d[min(len(d)-1, len(d)*99/100)]) / 1e6
	b.ReportMetric(p50, name+"-p50-ms")
	b.ReportMetric(p99, name+"-p99-ms")
	return p50, p99
}

// ftsWord is word k of a synthetic vocabulary ("w" + base-26 letters).
func ftsWord(k int) string {
	var sb strings.Builder
	sb.WriteByte('w')
	for {
		sb.WriteByte(byte('a' + k%26))
		k /= 26
		if k == 0 {
			return sb.String()
		}
	}
}

// BenchmarkSearchFTS: one page of 30 (with totals, or skipTotal) of a full-
// text search over 1,000,000 short documents (SVCD_BENCH_FTS_N to change):
// a title of 6 words drawn from 20,000 with a Zipf law (word 0 is in about
// one document of three, word 19,999 in a few dozen), so queries range from
// very common to rare terms. Query mix: one common word, one rare word,
// two words, and an accented word.
func BenchmarkSearchFTS(b *testing.B) {
	n := benchSize("SVCD_BENCH_FTS_N", 1000000)
	st := benchStack(b)
	createColl(b, st, map[string]any{"name": "docs_fts", "view_rule": "", "fields": []map[string]any{
		{"name": "title", "type": "text", "searchable": true}, {"name": "n", "type": "number"}}})
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 7)), 1.1, 1, 19999)
	titles := make([]string, n)
	for i := range titles {
		w := make([]string, 6)
		for j := range w {
			w[j] = ftsWord(int(zipf.Uint64()))
		}
		if i%1000 == 0 {
			w[0] = "crème"
		}
		titles[i] = strings.Join(w, " ")
	}
	fillBatches(b, st, "docs_fts", n, func(i int) map[string]any { return map[string]any{"title": titles[i], "n": i} })
	queries := []struct{ name, q string }{
		{"common", ftsWord(3)}, {"rare", ftsWord(15000)}, {"two-words", ftsWord(5) + " " + ftsWord(40)}, {"accent", "creme"},
	}
	for _, qq := range queries {
		for _, skip := range []bool{false, true} {
			name := qq.name + "/totals"
			if skip {
				name = qq.name + "/skipTotal"
			}
			b.Run(name, func(b *testing.B) {
				total := 0
				latencies(b, "query", func(i int) {
					l, err := st.Engine.Records().ListRecords(context.Background(), engine.Principal{}, "docs_fts",
						engine.ListQuery{PerPage: 30, Search: qq.q, SkipTotal: skip})
					if err != nil {
						b.Fatal(err)
					}
					total = l.TotalItems
				})
				if !skip {
					b.ReportMetric(float64(total), "matches")
				}
			})
		}
	}
}

// BenchmarkVectorSearch: the 10 nearest of 100,000 384-dimension vectors
// (SVCD_BENCH_VEC_N to change) by cosine similarity, through ListRecords,
// against a plain Go loop computing the same cosines over the same vectors
// held in memory as []float32 (the floor: no storage, no decoding).
func BenchmarkVectorSearch(b *testing.B) {
	n := benchSize("SVCD_BENCH_VEC_N", 100000)
	const dim = 384
	st := benchStack(b)
	createColl(b, st, map[string]any{"name": "vecs", "view_rule": "", "fields": []map[string]any{
		{"name": "emb", "type": "vector", "dimensions": dim}, {"name": "n", "type": "number"}}})
	r := rand.New(rand.NewPCG(9, 9))
	data := make([][]float32, n)
	for i := range data {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		data[i] = v
	}
	fillBatches(b, st, "vecs", n, func(i int) map[string]any { return map[string]any{"emb": data[i], "n": i} })
	queries := make([][]float32, 16)
	qtext := make([]string, len(queries))
	for i := range queries {
		q := make([]float32, dim)
		parts := make([]string, dim)
		for j := range q {
			q[j] = float32(r.NormFloat64())
			parts[j] = strconv.FormatFloat(float64(q[j]), 'g', -1, 32)
		}
		queries[i], qtext[i] = q, strings.Join(parts, ",")
	}
	var engP50, goP50 float64
	b.Run("engine", func(b *testing.B) {
		engP50, _ = latencies(b, "query", func(i int) {
			l, err := st.Engine.Records().ListRecords(context.Background(), engine.Principal{}, "vecs",
				engine.ListQuery{HasNear: true, NearVector: qtext[i%len(qtext)], NearLimit: "10"})
			if err != nil || l.Vector == nil || l.Vector.Scanned != n {
				b.Fatalf("%v %+v", err, l)
			}
		})
	})
	b.Run("go-loop", func(b *testing.B) {
		goP50, _ = latencies(b, "query", func(i int) {
			q := queries[i%len(queries)]
			var qn float32
			for _, x := range q {
				qn += x * x
			}
			qnorm := math.Sqrt(float64(qn))
			best := make([]float64, 0, 10)
			for _, v := range data {
				var dot, vv float32
				for j, x := range q {
					dot += x * v[j]
					vv += v[j] * v[j]
				}
				s := float64(dot) / (qnorm * math.Sqrt(float64(vv)))
				if len(best) < 10 {
					best = append(best, s)
					sort.Float64s(best)
				} else if s > best[0] {
					best[0] = s
					sort.Float64s(best)
				}
			}
		})
	})
	if goP50 > 0 {
		b.Logf("engine p50 / Go loop p50 = %.1f", engP50/goP50)
		fmt.Fprintf(os.Stderr, "vector: engine p50 %.1f ms, Go loop p50 %.1f ms, ratio %.1f\n", engP50, goP50, engP50/goP50)
	}
}
