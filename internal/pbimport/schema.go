package pbimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"svcd/internal/pbschema"
)

// A Step is one PocketBase collection's way into svcd: its translation
// (pbschema) and where its records go.
type Step struct {
	From       *Collection
	Translated pbschema.Translated
}

// names resolves PocketBase collection ids and names to svcd names.
type names map[string]string

func (n names) SvcdName(pbIDOrName string) (string, bool) { s, ok := n[pbIDOrName]; return s, ok }

// Plan translates the collections an import carries (every collection
// but PocketBase's system ones) and orders them so that a relation's
// target comes before it and views come last. What it drops or changes
// goes to rep.
func Plan(colls []*Collection, rep *Report) []Step {
	lk := names{}
	for _, c := range colls {
		if c.System {
			continue
		}
		n, _ := pbschema.CollectionName(c.Name)
		lk[c.ID], lk[c.Name] = n, n
	}
	var steps []Step
	for _, c := range colls {
		if c.System {
			continue // _superusers and _externalAuths: accounts_import.go
		}
		var pb pbschema.PBCollection
		b, _ := json.Marshal(c.Raw)
		if err := json.Unmarshal(b, &pb); err != nil {
			rep.Problemf("%s: not imported: %v", c.Name, err)
			continue
		}
		tr, problems, err := pbschema.Translate(pb, lk)
		for _, p := range problems {
			rep.Problemf("%s: %s", c.Name, p.String())
		}
		if err != nil {
			rep.Problemf("%s: not imported: %v", c.Name, err)
			continue
		}
		steps = append(steps, Step{From: c, Translated: tr})
	}
	return order(steps, rep)
}

// order puts relation targets first (a cycle is broken where it closes,
// and reported) and views last.
func order(steps []Step, rep *Report) []Step {
	byName := map[string]int{}
	for i, s := range steps {
		byName[s.Translated.Name] = i
	}
	state := make([]int, len(steps)) // 0 new, 1 visiting, 2 done
	var out []Step
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			if state[i] == 1 {
				rep.Problemf("%s: its relations form a cycle; a record whose relation target comes later fails and is reported", steps[i].Translated.Name)
			}
			return
		}
		state[i] = 1
		for _, f := range steps[i].Translated.Fields {
			if target, ok := f["collection"].(string); ok && target != steps[i].Translated.Name {
				if j, ok := byName[target]; ok {
					visit(j)
				}
			}
		}
		state[i] = 2
		out = append(out, steps[i])
	}
	idx := make([]int, len(steps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return steps[idx[a]].Translated.Type != "view" && steps[idx[b]].Translated.Type == "view"
	})
	for _, i := range idx {
		visit(i)
	}
	return out
}

// CreateCollection makes step's collection on the node, with its
// indexes. A collection of that name that exists is left as it is (an
// import run again, or a collection made by hand) and reported when its
// fields differ; exists tells the caller.
func CreateCollection(ctx context.Context, t *Target, s Step, rep *Report) (exists bool, err error) {
	name := s.Translated.Name
	var have struct {
		Fields []map[string]any `json:"fields"`
	}
	err = t.Do(ctx, "GET", "/admin/collections/"+name, nil, &have)
	var ae *APIError
	switch {
	case err == nil:
		want := map[string]bool{}
		for _, f := range s.Translated.Fields {
			want[f.Name()] = true
		}
		for _, f := range have.Fields {
			delete(want, fmt.Sprint(f["name"]))
		}
		if len(want) > 0 {
			rep.Problemf("%s: exists on the node without the fields %v; its records are imported into it as it is", name, keys(want))
		}
		return true, nil
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
	default:
		return false, err
	}
	if err := t.Do(ctx, "POST", "/admin/collections", s.Translated.Collection, nil); err != nil {
		return false, fmt.Errorf("collection %s: %w", name, err)
	}
	for _, ix := range s.Translated.Indexes {
		if err := t.Do(ctx, "POST", "/admin/collections/"+name+"/indexes", ix, nil); err != nil {
			rep.Problemf("%s: index on %s not made: %v", name, ix.Field, err)
		}
	}
	return false, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
