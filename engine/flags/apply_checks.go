package flags

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// The checks a put makes inside its apply, against the committed state:
// two writes proposed at once may each be fine alone and wrong together
// (a prerequisite cycle made by two flags naming each other), so these
// cannot be decided by the proposer. They read only the transaction, in
// a fixed order, so every replica answers alike.

// checkRefs refuses refs to a flag or segment that does not exist, to a
// variation the flag lacks, and a reference that closes a cycle through
// the definition src of kind.
func checkRefs(tx *fsm.Tx, kind, src string, refs []ref) error {
	p := problems{}
	for _, r := range refs {
		switch r.Kind {
		case refFlag:
			var vars string
			err := tx.QueryRow(`SELECT variations FROM _svc_flags WHERE key = ?`, r.Name).Scan(&vars)
			if errors.Is(err, sql.ErrNoRows) {
				p.add(r.Path+".key", "no flag %q", r.Name)
				continue
			}
			if err != nil {
				return err
			}
			var have []string
			if err := json.Unmarshal([]byte(vars), &have); err != nil {
				return fmt.Errorf("%w: flags: variations of %s: %v", fsm.ErrHalt, r.Name, err)
			}
			if !slices.Contains(have, r.Variation) {
				p.add(r.Path+".variation", "flag %q has no variation %q (it has %s)", r.Name, r.Variation, listOrNone(have))
			}
		case refSegment:
			var one int
			err := tx.QueryRow(`SELECT 1 FROM _svc_flag_segments WHERE name = ?`, r.Name).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				p.add(r.Path, "no segment %q", r.Name)
				continue
			}
			if err != nil {
				return err
			}
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	var next []string
	for _, r := range refs {
		if r.Kind == kind {
			next = append(next, r.Name)
		}
	}
	cycle, err := findCycle(tx, kind, src, next)
	if err != nil || cycle == nil {
		return err
	}
	for _, r := range refs {
		if r.Kind == kind && r.Name == cycle[1] {
			what := "prerequisites"
			if kind == refSegment {
				what = "segments"
			}
			return engine.FieldError(r.Path, fmt.Sprintf("the %s form a cycle: %s", what, strings.Join(cycle, " → ")))
		}
	}
	return nil
}

// findCycle looks for a path from src back to itself through references
// between definitions of kind, src's own references being next; it
// answers the path (src first and last) or nil.
func findCycle(tx *fsm.Tx, kind, src string, next []string) ([]string, error) {
	rows, err := tx.Query(`SELECT src, dst FROM _svc_flag_refs WHERE src_kind = ? AND dst_kind = ? ORDER BY src, dst`, kind, kind)
	if err != nil {
		return nil, err
	}
	adj := map[string][]string{}
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			rows.Close()
			return nil, err
		}
		if a != src && !slices.Contains(adj[a], b) {
			adj[a] = append(adj[a], b)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	next = slices.Clone(next)
	slices.Sort(next)
	adj[src] = slices.Compact(next)
	path := []string{src}
	seen := map[string]bool{src: true}
	var walk func(n string) bool
	walk = func(n string) bool {
		for _, m := range adj[n] {
			if m == src {
				path = append(path, m)
				return true
			}
			if seen[m] {
				continue
			}
			seen[m] = true
			path = append(path, m)
			if walk(m) {
				return true
			}
			path = path[:len(path)-1]
		}
		return false
	}
	if walk(src) {
		return path, nil
	}
	return nil, nil
}

// checkDependents refuses a new definition of flag key that drops a
// variation another flag's prerequisite needs.
func checkDependents(tx *fsm.Tx, key string, variations []string) error {
	rows, err := tx.Query(`SELECT src, variation FROM _svc_flag_refs WHERE src_kind = 'flag' AND dst_kind = 'flag' AND dst = ?
		ORDER BY src, variation`, key)
	if err != nil {
		return err
	}
	var needs []string
	for rows.Next() {
		var src, v string
		if err := rows.Scan(&src, &v); err != nil {
			rows.Close()
			return err
		}
		if !slices.Contains(variations, v) {
			needs = append(needs, fmt.Sprintf("flag %q needs %q", src, v))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(needs) > 0 {
		return engine.FieldError("variations", "other flags have prerequisites on variations this definition drops: "+strings.Join(needs, ", "))
	}
	return nil
}

// dependents lists, by kind, who references the definition dst of kind
// dstKind ("flags": [...], "segments": [...]).
func dependents(tx *fsm.Tx, dstKind, dst string) (map[string]any, error) {
	rows, err := tx.Query(`SELECT DISTINCT src_kind, src FROM _svc_flag_refs WHERE dst_kind = ? AND dst = ? ORDER BY src_kind, src`, dstKind, dst)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for rows.Next() {
		var kind, src string
		if err := rows.Scan(&kind, &src); err != nil {
			rows.Close()
			return nil, err
		}
		l, _ := out[kind+"s"].([]string)
		out[kind+"s"] = append(l, src)
	}
	return out, rows.Err()
}

// writeRefs replaces the references of src of kind.
func writeRefs(tx *fsm.Tx, kind, src string, refs []ref) error {
	if _, err := tx.Exec(`DELETE FROM _svc_flag_refs WHERE src_kind = ? AND src = ?`, kind, src); err != nil {
		return err
	}
	for _, r := range refs {
		if _, err := tx.Exec(`INSERT OR IGNORE INTO _svc_flag_refs (src_kind, src, dst_kind, dst, variation) VALUES (?, ?, ?, ?, ?)`,
			kind, src, r.Kind, r.Name, r.Variation); err != nil {
			return err
		}
	}
	return nil
}

// listOrNone joins names, or says none.
func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
