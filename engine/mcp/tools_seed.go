package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/google/jsonschema-go/jsonschema"

	"svcd/engine/schema"
)

// MaxSeed caps one seed call (SPEC.md).
const MaxSeed = 1000

// seedBatch is how many records one batch request carries (the batch cap).
const seedBatch = 100

// seedTool (mcp:write) fills a collection with fake records made by
// gofakeit from each field's type, options and name, written through the
// batch route (rules, validation, hooks, one Raft command per batch).
func (s *Server) seedTool() *Tool {
	return &Tool{
		Name: ToolPrefix + "seed", Title: "Seed fake records",
		Description: fmt.Sprintf("Create up to %d fake records in a collection; values follow each field's type and options "+
			"(relations point at existing records). overrides fixes fields to given values; seed makes the data reproducible.", MaxSeed),
		Scope: ScopeWrite,
		Input: closed(map[string]*jsonschema.Schema{
			"collection": str("collection name"),
			"count":      integer("records to create", 1, MaxSeed),
			"overrides":  anyObject("field values used for every record"),
			"seed":       integer("random seed (default: time)"),
		}, "collection", "count"),
		run: s.seed,
	}
}

func (s *Server) seed(ctx context.Context, c Caller, args map[string]any) (any, error) {
	col := s.collection(argString(args, "collection"))
	if col == nil {
		return nil, toolErrorf("no collection %q", argString(args, "collection"))
	}
	if col.Type == schema.TypeView {
		return nil, toolErrorf("%s is a view: it has no records of its own", col.Name)
	}
	count := int(args["count"].(float64))
	seed := uint64(time.Now().UnixNano())
	if n, ok := args["seed"].(float64); ok {
		seed = uint64(n)
	}
	faker := gofakeit.New(seed)
	overrides, _ := args["overrides"].(map[string]any)
	related := map[string][]string{}
	for _, f := range col.Fields {
		if f.Type != schema.FieldRelation || overrides[f.Name] != nil {
			continue
		}
		ids, err := s.relatedIDs(ctx, c, f.Collection)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 && f.Required {
			return nil, toolErrorf("field %s is a required relation and its collection has no record to point at: seed it first", f.Name)
		}
		related[f.Name] = ids
	}
	created := []string{}
	for done := 0; done < count; {
		n := min(seedBatch, count-done)
		reqs := make([]map[string]any, n)
		for i := range reqs {
			rec := fakeRecord(faker, col, related)
			for k, v := range overrides {
				rec[k] = v
			}
			reqs[i] = map[string]any{"method": "POST", "url": "/api/v1/" + url.PathEscape(col.Name), "body": rec}
		}
		body, err := s.rest(ctx, c.recordPrincipal(), Call{Method: "POST", Path: "/batch", Body: map[string]any{"requests": reqs}})
		if err != nil {
			return map[string]any{"created": len(created), "ids": created, "error": err.Error()}, toolErrorf(
				"seeded %d of %d records, then: %v", len(created), count, err)
		}
		created = append(created, batchIDs(body)...)
		done += n
	}
	return map[string]any{"collection": col.Name, "created": len(created), "ids": created}, nil
}

// collection finds a collection by name or id in the catalogue.
func (s *Server) collection(nameOrID string) *schema.Collection {
	for _, c := range s.opts.Catalog.Collections() {
		if c.Name == nameOrID || c.ID == nameOrID {
			return c
		}
	}
	return nil
}

// relatedIDs reads up to 200 ids of the collection a relation targets, as
// the caller may read them.
func (s *Server) relatedIDs(ctx context.Context, c Caller, target string) ([]string, error) {
	tc := s.collection(target)
	if tc == nil {
		return nil, toolErrorf("relation target %q not found", target)
	}
	body, err := s.rest(ctx, c.recordPrincipal(), Call{Method: "GET", Path: "/" + url.PathEscape(tc.Name),
		Query: url.Values{"perPage": {"200"}, "fields": {"id"}, "skipTotal": {"1"}}})
	if err != nil {
		return nil, fmt.Errorf("read %s for relations: %w", tc.Name, err)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &list)
	ids := make([]string, len(list.Data))
	for i, r := range list.Data {
		ids[i] = r.ID
	}
	return ids, nil
}

// batchIDs reads the ids of the records a batch created (its answer,
// unwrapped: [{status, body: record}]).
func batchIDs(body json.RawMessage) []string {
	var out []struct {
		Body struct {
			ID string `json:"id"`
		} `json:"body"`
	}
	_ = json.Unmarshal(body, &out)
	ids := []string{}
	for _, e := range out {
		ids = append(ids, e.Body.ID)
	}
	return ids
}

// fakeRecord makes one record's values.
func fakeRecord(f *gofakeit.Faker, col *schema.Collection, related map[string][]string) map[string]any {
	rec := map[string]any{}
	if col.Type == schema.TypeAuth {
		rec["email"] = fakeEmail(f)
		pw := f.Password(true, true, true, true, false, 20)
		rec["password"] = pw
	}
	for _, fd := range col.Fields {
		if !writable(fd) {
			continue
		}
		if v, ok := fakeValue(f, fd, related[fd.Name]); ok {
			rec[fd.Name] = v
		}
	}
	return rec
}
