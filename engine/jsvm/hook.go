package jsvm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// Hooks (SPEC.md "Server-side code"): code an admin attaches to the
// record writes of a collection, before or after each kind of write.

// The six events.
const (
	BeforeCreate = "beforeCreate"
	AfterCreate  = "afterCreate"
	BeforeUpdate = "beforeUpdate"
	AfterUpdate  = "afterUpdate"
	BeforeDelete = "beforeDelete"
	AfterDelete  = "afterDelete"
)

// events maps each event to the record write it follows and whether it
// runs before it.
var events = map[string]struct {
	kind   string
	before bool
}{
	BeforeCreate: {engine.EvRecordCreate, true},
	AfterCreate:  {engine.EvRecordCreate, false},
	BeforeUpdate: {engine.EvRecordUpdate, true},
	AfterUpdate:  {engine.EvRecordUpdate, false},
	BeforeDelete: {engine.EvRecordDelete, true},
	AfterDelete:  {engine.EvRecordDelete, false},
}

// AllCollections as a hook's collection attaches it to every collection.
const AllCollections = "*"

// Hook is code run around the record writes of a collection
// (CONTRACT.md's shape, with its timestamps).
type Hook struct {
	ID         string `json:"id"`
	Collection string `json:"collection"`
	Event      string `json:"event"`
	Code       string `json:"code"`
	Enabled    bool   `json:"enabled"`
	// Order sorts the hooks of one collection and event: lower first,
	// then by id.
	Order   int64 `json:"order"`
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// hookInput is a hook's create or patch body: the members present.
type hookInput struct {
	Collection *string `json:"collection"`
	Event      *string `json:"event"`
	Code       *string `json:"code"`
	Enabled    *bool   `json:"enabled"`
	Order      *int64  `json:"order"`
}

// Hooks lists every hook by collection, event and order.
func (m *Module) Hooks() []*Hook { return m.set.Load().hooks }

// Hook returns one hook.
func (m *Module) Hook(id string) (*Hook, error) {
	for _, h := range m.set.Load().hooks {
		if h.ID == id {
			return h, nil
		}
	}
	return nil, errHookNotFound
}

// CreateHook validates the body (the code compiles), stores the hook
// and returns it.
func (m *Module) CreateHook(ctx context.Context, body []byte) (*Hook, uint64, error) {
	var in hookInput
	if err := decodeInput(body, &in); err != nil {
		return nil, 0, err
	}
	now := m.core.Now().Unix()
	h := &Hook{ID: "hook_" + engine.NewID(), Enabled: true, Created: now, Updated: now}
	if err := m.applyHookInput(h, in, true); err != nil {
		return nil, 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdHookSave, hookSaveCmd{Hook: *h, Create: true})
	if err != nil {
		return nil, idx, err
	}
	return h, idx, nil
}

// UpdateHook changes the members the body holds.
func (m *Module) UpdateHook(ctx context.Context, id string, body []byte) (*Hook, uint64, error) {
	old, err := m.Hook(id)
	if err != nil {
		return nil, 0, err
	}
	var in hookInput
	if err := decodeInput(body, &in); err != nil {
		return nil, 0, err
	}
	h := *old
	h.Updated = max(m.core.Now().Unix(), old.Updated)
	if err := m.applyHookInput(&h, in, false); err != nil {
		return nil, 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdHookSave, hookSaveCmd{Hook: h})
	if err != nil {
		return nil, idx, err
	}
	return &h, idx, nil
}

// DeleteHook removes a hook.
func (m *Module) DeleteHook(ctx context.Context, id string) (uint64, error) {
	if _, err := m.Hook(id); err != nil {
		return 0, err
	}
	_, idx, err := m.core.Propose(ctx, cmdHookDelete, deleteCmd{ID: id})
	return idx, err
}

// applyHookInput sets the members in holds on h and validates the
// result (all required members on a create).
func (m *Module) applyHookInput(h *Hook, in hookInput, create bool) error {
	d := map[string]any{}
	if in.Collection != nil {
		h.Collection = strings.TrimSpace(*in.Collection)
	}
	if in.Event != nil {
		h.Event = strings.TrimSpace(*in.Event)
	}
	if in.Code != nil {
		h.Code = *in.Code
	}
	if in.Enabled != nil {
		h.Enabled = *in.Enabled
	}
	if in.Order != nil {
		h.Order = *in.Order
	}
	// The collection is checked when it is named: a hook of a collection
	// dropped since can still be changed (disabled) or deleted.
	switch {
	case !create && in.Collection == nil:
	case h.Collection == "":
		d["collection"] = "cannot be blank"
	case h.Collection != AllCollections && m.core.Coll(h.Collection) == nil:
		d["collection"] = "no collection has this name (\"*\" attaches the hook to every collection)"
	case h.Collection != AllCollections:
		h.Collection = m.core.Coll(h.Collection).Name
	}
	if _, ok := events[h.Event]; !ok {
		d["event"] = "must be one of beforeCreate, afterCreate, beforeUpdate, afterUpdate, beforeDelete, afterDelete"
	}
	if create || in.Code != nil {
		m.checkCode(h.Code, d)
	}
	if len(d) > 0 {
		return &engine.Error{Kind: engine.KindValidation, Message: "Validation failed", Details: d}
	}
	return nil
}

// decodeInput decodes a create or patch body; a member of the wrong type
// is a 422 naming it.
func decodeInput(body []byte, v any) error {
	obj, err := engine.DecodeBody(body)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(obj)
	if err := json.Unmarshal(raw, v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return engine.FieldError(ute.Field, "must be "+schema.JSONKindName(ute.Type))
		}
		return engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	return nil
}
