package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"svcd/engine/schema"
)

// TestTopK: the heap keeps exactly the k best of a stream (score
// descending, id ascending on ties), whatever k and the order of arrival.
func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n, k := r.IntN(300), 1+r.IntN(40)
		var all []scored
		top := &topK{k: k}
		for i := 0; i < n; i++ {
			e := scored{score: float64(r.IntN(20)) / 10, id: fmt.Sprintf("id%04d", r.IntN(1000))}
			all = append(all, e)
			if top.wants(e.score, []byte(e.id)) {
				top.push(e)
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[j].worse(all[i]) })
		want := all[:min(k, len(all))]
		got := top.sorted()
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d results, want %d", trial, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d: result %d = %v, want %v", trial, i, got[i], want[i])
			}
		}
	}
}

// TestCosineBlob: the in-place decoder agrees with DecodeVector and a
// float64 reference; other lengths and zero vectors are not scored.
func TestCosineBlob(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 100; trial++ {
		d := 1 + r.IntN(400)
		q, v := make([]float32, d), make([]float32, d)
		var qq, vv, dot float64
		for i := range q {
			q[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			qq += float64(q[i]) * float64(q[i])
			vv += float64(v[i]) * float64(v[i])
			dot += float64(q[i]) * float64(v[i])
		}
		want := dot / math.Sqrt(qq*vv)
		got, ok := cosineBlob(q, math.Sqrt(qq), schema.EncodeVector(v))
		if !ok || math.Abs(got-want) > 1e-4 {
			t.Fatalf("d=%d: cosine %v, want %v", d, got, want)
		}
		if g2, ok := cosineVec(q, math.Sqrt(qq), v); !ok || math.Abs(g2-got) > 1e-9 {
			t.Fatalf("d=%d: cosineVec %v != cosineBlob %v", d, g2, got)
		}
		if _, ok := cosineBlob(q, math.Sqrt(qq), schema.EncodeVector(v[:d-1])); ok {
			t.Fatalf("d=%d: a shorter vector was scored", d)
		}
	}
	if _, ok := cosineBlob([]float32{1, 0}, 1, schema.EncodeVector([]float32{0, 0})); ok {
		t.Fatal("the zero vector was scored")
	}
}

// TestCosineBlobNoAlloc: scoring a stored vector allocates nothing.
func TestCosineBlobNoAlloc(t *testing.T) {
	q := make([]float32, 384)
	for i := range q {
		q[i] = float32(i)
	}
	b := schema.EncodeVector(q)
	top := &topK{k: 10, h: make([]scored, 0, 10)}
	wanted := 0
	allocs := testing.AllocsPerRun(100, func() {
		if s, ok := cosineBlob(q, 1, b); ok && top.wants(s, b[:4]) {
			wanted++
		}
	})
	if wanted == 0 {
		t.Fatal("the scored row was never wanted by an empty heap")
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per scored row", allocs)
	}
}
