package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"svcd/engine/schema"
)

// Collections returns every collection, ordered by name.
func (sc *Schema) Collections() []*schema.Collection {
	set := sc.e.schema.Load()
	out := make([]*schema.Collection, len(set.list))
	for i, ci := range set.list {
		out[i] = ci.Collection
	}
	return out
}

// Collection returns one collection by name or id.
func (sc *Schema) Collection(nameOrID string) (*schema.Collection, error) {
	ci := sc.e.Coll(nameOrID)
	if ci == nil {
		return nil, ErrNotFound
	}
	return ci.Collection, nil
}

type collectionCreateCmd struct {
	Collection  schema.Collection `json:"collection"`
	ViewColumns []string          `json:"view_columns,omitempty"`
}

type collectionUpdateCmd struct {
	ID          string            `json:"id"`
	Version     int64             `json:"version"`
	Collection  schema.Collection `json:"collection"`
	ViewColumns []string          `json:"view_columns,omitempty"`
}

type collectionDeleteCmd struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
}

// decodeStrict decodes a JSON object, refusing trailing data.
func decodeStrict(body []byte, v any) *Error {
	dec := json.NewDecoder(bytesReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			field := strings.ReplaceAll(ute.Field, ".Options", "")
			return ValidationError(map[string]string{field: "must be " + schema.JSONKindName(ute.Type)})
		}
		if errors.As(err, &ute) {
			return Errorf(KindBadRequest, "Expected a JSON object")
		}
		return Errorf(KindBadRequest, "Invalid JSON body: %v", err)
	}
	if dec.More() {
		return Errorf(KindBadRequest, "Invalid JSON body: trailing data")
	}
	return nil
}

// mergeObjects overlays the members of patch on base when both are JSON
// objects; otherwise patch wins.
func mergeObjects(base, patch json.RawMessage) json.RawMessage {
	var b, p map[string]json.RawMessage
	if json.Unmarshal(base, &b) != nil || json.Unmarshal(patch, &p) != nil || b == nil || p == nil {
		return patch
	}
	for k, v := range p {
		b[k] = v
	}
	out, _ := json.Marshal(b)
	return out
}

// CreateCollection validates and creates a collection from its JSON.
func (sc *Schema) CreateCollection(ctx context.Context, body []byte) (*schema.Collection, uint64, error) {
	return sc.createCollection(ctx, body, false)
}

// CreateSystemCollection is CreateCollection for a collection a module
// creates for its own use (engine/notify's notification collections): its
// name starts with svc_, a prefix no admin may use. Once it exists it is
// an ordinary collection: admins read, change (keeping its name) and
// delete it through the collection routes.
func (sc *Schema) CreateSystemCollection(ctx context.Context, body []byte) (*schema.Collection, uint64, error) {
	return sc.createCollection(ctx, body, true)
}

func (sc *Schema) createCollection(ctx context.Context, body []byte, system bool) (*schema.Collection, uint64, error) {
	if d := schema.CheckDefinition(body); d != nil {
		return nil, 0, ValidationError(d)
	}
	var c schema.Collection
	if err := decodeStrict(body, &c); err != nil {
		return nil, 0, err
	}
	if c.Type == "" {
		c.Type = schema.TypeBase
	}
	now := sc.e.now().Unix()
	c.ID = "col_" + NewID()
	c.Created, c.Updated = now, now
	if c.Fields == nil {
		c.Fields = []*schema.Field{}
	}
	if system && !systemName(c.Name) {
		return nil, 0, FieldError("name", "a module's collection is named svc_<name>")
	}
	if verr := sc.validateCollection(&c, nil, system); verr != nil {
		return nil, 0, verr
	}
	var viewCols []string
	if c.Type == schema.TypeView {
		var verr *Error
		if c.Fields, viewCols, verr = sc.inferView(ctx, c.ViewQuery); verr != nil {
			return nil, 0, verr
		}
		c.CreateRule, c.UpdateRule, c.DeleteRule = nil, nil, nil
	}
	if verr := sc.checkRules(&c, viewCols, nil); verr != nil {
		return nil, 0, verr
	}
	_, idx, err := sc.e.Propose(ctx, cmdCollectionCreate, collectionCreateCmd{Collection: c, ViewColumns: viewCols})
	if err != nil {
		return nil, idx, err
	}
	if ci := sc.e.Coll(c.ID); ci != nil {
		return ci.Collection, idx, nil
	}
	return &c, idx, nil
}

// UpdateCollection applies a partial change: any top-level member present
// in the body replaces the current one. Renames and field changes migrate
// the table in the same command.
func (sc *Schema) UpdateCollection(ctx context.Context, nameOrID string, body []byte) (*schema.Collection, uint64, error) {
	if sc.e.Coll(nameOrID) == nil {
		return nil, 0, ErrNotFound
	}
	if d := schema.CheckDefinition(body); d != nil {
		return nil, 0, ValidationError(d)
	}
	for attempt := 0; ; attempt++ {
		old := sc.e.Coll(nameOrID)
		if old == nil {
			return nil, 0, ErrNotFound
		}
		var patch map[string]json.RawMessage
		if err := decodeStrict(body, &patch); err != nil {
			return nil, 0, err
		}
		// Merge: start from the stored JSON, overlay the patch.
		merged := map[string]json.RawMessage{}
		cur, _ := json.Marshal(old.Collection)
		json.Unmarshal(cur, &merged)
		for k, v := range patch {
			switch k {
			case "id", "created", "updated", "rule_errors":
				continue // read-only: a GET answer sent back as it is
			case "auth_options":
				// Options left out keep their current value.
				v = mergeObjects(merged[k], v)
			}
			merged[k] = v
		}
		mb, _ := json.Marshal(merged)
		var c schema.Collection
		if err := decodeStrict(mb, &c); err != nil {
			return nil, 0, err
		}
		c.ID, c.Created, c.Version = old.ID, old.Created, old.Version
		c.Updated = max(sc.e.now().Unix(), old.Updated)
		if c.Fields == nil {
			c.Fields = []*schema.Field{}
		}
		if verr := sc.validateCollection(&c, old, false); verr != nil {
			return nil, 0, verr
		}
		var viewCols []string
		if c.Type == schema.TypeView {
			var verr *Error
			if c.Fields, viewCols, verr = sc.inferView(ctx, c.ViewQuery); verr != nil {
				return nil, 0, verr
			}
			c.CreateRule, c.UpdateRule, c.DeleteRule = nil, nil, nil
		}
		if verr := sc.checkRules(&c, viewCols, old); verr != nil {
			return nil, 0, verr
		}
		_, idx, err := sc.e.Propose(ctx, cmdCollectionUpdate, collectionUpdateCmd{
			ID: old.ID, Version: old.Version, Collection: c, ViewColumns: viewCols,
		})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		if ci := sc.e.Coll(old.ID); ci != nil {
			return ci.Collection, idx, nil
		}
		return &c, idx, nil
	}
}

// DeleteCollection drops a collection and its table.
func (sc *Schema) DeleteCollection(ctx context.Context, nameOrID string) (uint64, error) {
	for attempt := 0; ; attempt++ {
		ci := sc.e.Coll(nameOrID)
		if ci == nil {
			return 0, ErrNotFound
		}
		_, idx, err := sc.e.Propose(ctx, cmdCollectionDelete, collectionDeleteCmd{ID: ci.ID, Version: ci.Version})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		return idx, err
	}
}
