package suite

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// setCollection has no unique index on k: a create applied twice would
// show as two records with the same k.
const setCollection = `{"name":"elements","type":"base","fields":[{"name":"k","type":"text","required":true}],
	"view_rule":"","create_rule":""}`

// Set inserts unique elements through random nodes. At the end every
// acknowledged element must be present on every node exactly once, and no
// node may hold an element nobody tried to insert.
type Set struct {
	mu        sync.Mutex
	seq       map[int]int
	attempted map[string]bool
	acked     map[string]bool
}

// NewSet is the set workload.
func NewSet() *Set {
	return &Set{seq: map[int]int{}, attempted: map[string]bool{}, acked: map[string]bool{}}
}

func (s *Set) Name() string { return "set" }

func (s *Set) Setup(ctx context.Context, env *Env) error {
	return createCollection(ctx, env, setCollection)
}

func (s *Set) Step(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	s.mu.Lock()
	s.seq[w.ID]++
	k := fmt.Sprintf("c%d-%d", w.ID, s.seq[w.ID])
	s.attempted[k] = true
	s.mu.Unlock()
	resp, err := w.Client(nd).Do(context.Background(), "POST", "/api/v1/elements", map[string]any{"k": k})
	switch {
	case transient(status(resp), err):
		w.Done("add", Info)
	case resp.Status == http.StatusCreated:
		s.mu.Lock()
		s.acked[k] = true
		s.mu.Unlock()
		w.Done("add", OK)
	default:
		w.Errorf("%s POST elements: %s", nd.Name, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *Set) Check(ctx context.Context, env *Env) Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := Verdict{Valid: true, Acknowledged: len(s.acked)}
	lost := map[string]bool{}
	for _, nd := range env.C.Running() {
		seen, err := s.readAll(ctx, env, nd.Name)
		if err != nil {
			v.Valid = false
			v.Notes = append(v.Notes, fmt.Sprintf("%s: final read: %v", nd.Name, err))
			continue
		}
		dups, unexpected := 0, 0
		for k, n := range seen {
			if n > 1 {
				dups++
			}
			if !s.attempted[k] {
				unexpected++
			}
		}
		missing := 0
		for k := range s.acked {
			if seen[k] == 0 {
				lost[k] = true
				missing++
			}
		}
		v.Duplicates = max(v.Duplicates, dups)
		v.Notes = append(v.Notes, fmt.Sprintf("%s holds %d elements (%d acknowledged missing, %d twice, %d never attempted)", nd.Name, len(seen), missing, dups, unexpected))
		if unexpected > 0 {
			v.Valid = false
		}
	}
	v.Lost = len(lost)
	if v.Lost > 0 || v.Duplicates > 0 {
		v.Valid = false
	}
	return v
}

// readAll lists every element on node name (cursor pages of 500, local
// reads after the convergence the runner waited for) and counts each k.
func (s *Set) readAll(ctx context.Context, env *Env, name string) (map[string]int, error) {
	cl := env.C.Admin(env.C.Node(name))
	cl.Timeout = 30 * time.Second
	seen := map[string]int{}
	cursor := ""
	for {
		resp, err := cl.Do(ctx, "GET", "/api/v1/elements?perPage=500&cursor="+url.QueryEscape(cursor), nil)
		if err != nil {
			return nil, err
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("list: %s", resp)
		}
		var page struct {
			Data       []struct{ K string }
			NextCursor *string
		}
		if err := resp.JSON(&page); err != nil {
			return nil, err
		}
		for _, e := range page.Data {
			seen[e.K]++
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return seen, nil
		}
		cursor = *page.NextCursor
	}
}
