package engine

import (
	"encoding/json"
	"sort"
	"strings"

	"svcd/engine/schema"
)

// maxExpandDepth bounds nested expansion (a.b.c...).
const maxExpandDepth = 6

// expandTree is the parsed expand parameter: each key with its nested keys.
type expandTree struct {
	keys     []string
	children map[string]*expandTree
}

func parseExpand(s string) *expandTree {
	t := &expandTree{children: map[string]*expandTree{}}
	for _, path := range strings.Split(s, ",") {
		path = strings.TrimSpace(path)
		if path == "" {
			continue
		}
		node := t
		for i, seg := range strings.Split(path, ".") {
			if i >= maxExpandDepth || seg == "" {
				break
			}
			child, ok := node.children[seg]
			if !ok {
				child = &expandTree{children: map[string]*expandTree{}}
				node.children[seg] = child
				node.keys = append(node.keys, seg)
			}
			node = child
		}
	}
	return t
}

// expand returns, for each row, the JSON object of its expanded relations
// (nil when nothing was expanded). Each expanded record is filtered by its
// own collection's view rule, as a read from src.
func (rs *Records) expand(src *readSource, ci *Coll, rows [][]any, param string) ([][]byte, error) {
	out := make([][]byte, len(rows))
	if strings.TrimSpace(param) == "" || len(rows) == 0 {
		return out, nil
	}
	members, err := rs.expandLevel(src, ci, rows, parseExpand(param))
	if err != nil {
		return nil, err
	}
	for i := range rows {
		out[i] = membersJSON(members[i])
	}
	return out, nil
}

// membersJSON renders the expanded relations of one record as a JSON
// object, or nil when there are none.
func membersJSON(members []expandMember) []byte {
	if len(members) == 0 {
		return nil
	}
	b := []byte{'{'}
	for j, m := range members {
		if j > 0 {
			b = append(b, ',')
		}
		b = schema.AppendJSONString(b, m.key)
		b = append(b, ':')
		b = append(b, m.json...)
	}
	return append(b, '}')
}

type expandMember struct {
	key  string
	json []byte
}

// expandLevel expands the keys of tree for rows of ci.
func (rs *Records) expandLevel(src *readSource, ci *Coll, rows [][]any, tree *expandTree) ([][]expandMember, error) {
	members := make([][]expandMember, len(rows))
	if len(rows) == 0 {
		return members, nil // a level that found nothing has nothing below it
	}
	for _, key := range tree.keys {
		var err error
		if fi := ci.fieldByName(key); fi != nil && fi.Type == schema.FieldRelation && (!fi.Hidden || src.bypass(ci)) {
			err = rs.expandForward(src, ci, rows, fi, key, tree.children[key], members)
		} else if coll, field, ok := splitVia(key); ok {
			err = rs.expandBack(src, ci, rows, coll, field, key, tree.children[key], members)
		}
		if err != nil {
			return nil, err
		}
	}
	return members, nil
}

func splitVia(key string) (string, string, bool) {
	i := strings.Index(key, "_via_")
	if i <= 0 || i+5 >= len(key) {
		return "", "", false
	}
	return key[:i], key[i+5:], true
}

func (ci *Coll) fieldByName(name string) *FieldInfo {
	for _, f := range ci.fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// relationIDs reads the ids a relation value holds.
func relationIDs(f *FieldInfo, v any) []string {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil
	}
	if !f.Multiple {
		return []string{s}
	}
	var ids []string
	json.Unmarshal([]byte(s), &ids)
	return ids
}

// fetchVisible reads records of target matching extra (a condition with
// its args) that p may view, with their own expansion applied, keyed by id
// in query order.
func (rs *Records) fetchVisible(src *readSource, target *Coll, extra string, extraArgs []any, sub *expandTree) ([][]any, map[string][]byte, error) {
	conds, args, deny, err := readCond(src, target)
	if errAdmin := AsError(err); errAdmin != nil && errAdmin.Kind == KindForbidden {
		return nil, nil, nil // not viewable: not expanded
	}
	if err != nil {
		return nil, nil, err
	}
	if deny {
		return nil, nil, nil
	}
	conds = append(conds, extra)
	args = append(args, extraArgs...)
	rows, err := src.query(false, "SELECT "+target.selectCols+" FROM "+target.table+" AS _r"+whereClause(conds)+" ORDER BY "+target.orderBy("", src.bypass(target)), args...)
	if err != nil {
		return nil, nil, err
	}
	var found [][]any
	for rows.Next() {
		row, err := target.scanRow(rows.Scan)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		found = append(found, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	var nested [][]byte
	if sub != nil && len(sub.keys) > 0 {
		m, err := rs.expandLevel(src, target, found, sub)
		if err != nil {
			return nil, nil, err
		}
		nested = make([][]byte, len(found))
		for i := range found {
			nested[i] = membersJSON(m[i])
		}
	}
	byID := make(map[string][]byte, len(found))
	for i, row := range found {
		var x []byte
		if nested != nil {
			x = nested[i]
		}
		byID[AsString(row[0])] = target.appendRecordExpanded(nil, row, src.bypass(target), nil, x)
	}
	return found, byID, nil
}

func placeholders(n int) string {
	return "?" + strings.Repeat(", ?", n-1)
}

func (rs *Records) expandForward(src *readSource, ci *Coll, rows [][]any, f *FieldInfo, key string, sub *expandTree, members [][]expandMember) error {
	target := src.coll(f.Collection)
	if target == nil {
		return nil
	}
	idx := 3 + fieldIndex(ci, f)
	seen := map[string]bool{}
	var ids []string
	for _, row := range rows {
		for _, id := range relationIDs(f, row[idx]) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	_, byID, err := rs.fetchVisible(src, target, "_r.id IN ("+placeholders(len(ids))+")", args, sub)
	if err != nil {
		return err
	}
	for i, row := range rows {
		rel := relationIDs(f, row[idx])
		if !f.Multiple {
			if len(rel) == 1 && byID[rel[0]] != nil {
				members[i] = append(members[i], expandMember{key, byID[rel[0]]})
			}
			continue
		}
		b := []byte{'['}
		n := 0
		for _, id := range rel {
			if j := byID[id]; j != nil {
				if n > 0 {
					b = append(b, ',')
				}
				b = append(b, j...)
				n++
			}
		}
		members[i] = append(members[i], expandMember{key, append(b, ']')})
	}
	return nil
}

func (rs *Records) expandBack(src *readSource, ci *Coll, rows [][]any, collName, fieldName, key string, sub *expandTree, members [][]expandMember) error {
	target := src.coll(collName)
	if target == nil {
		return nil
	}
	f := target.fieldByName(fieldName)
	if f == nil || f.Type != schema.FieldRelation || f.Collection != ci.ID || (f.Hidden && !src.bypass(target)) || !src.reaches(target) {
		return nil
	}
	parents := make([]any, len(rows))
	for i, row := range rows {
		parents[i] = AsString(row[0])
	}
	cond := "_r." + f.col + " IN (" + placeholders(len(parents)) + ")"
	if f.Multiple {
		cond = "EXISTS (SELECT 1 FROM json_each(_r." + f.col + ") WHERE value IN (" + placeholders(len(parents)) + "))"
	}
	found, byID, err := rs.fetchVisible(src, target, cond, parents, sub)
	if err != nil {
		return err
	}
	idx := 3 + fieldIndex(target, f)
	for i, row := range rows {
		parent := AsString(row[0])
		b := []byte{'['}
		n := 0
		for _, child := range found {
			for _, id := range relationIDs(f, child[idx]) {
				if id == parent {
					if n > 0 {
						b = append(b, ',')
					}
					b = append(b, byID[AsString(child[0])]...)
					n++
					break
				}
			}
		}
		members[i] = append(members[i], expandMember{key, append(b, ']')})
	}
	return nil
}
