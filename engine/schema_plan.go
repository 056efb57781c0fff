package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// A schema plan is several collection and index changes validated
// together and applied in one command's transaction (engine/migrations
// proposes one for a whole schema snapshot). Each step is the payload of
// the single command it stands for (collection create, update, delete;
// index create, delete) and is applied by that command's own handler, so
// a plan changes tables exactly as the routes would. Steps see the ones
// before them: a relation or a rule may name a collection the plan
// creates earlier.

// SchemaStep is one change of a plan; exactly one member is set. The
// members' types are the core's command payloads: a module holds and
// carries steps, and only the core builds them.
type SchemaStep struct {
	Create      *collectionCreateCmd `json:"create,omitempty"`
	Update      *collectionUpdateCmd `json:"update,omitempty"`
	Delete      *collectionDeleteCmd `json:"delete,omitempty"`
	IndexCreate *indexCreateCmd      `json:"index_create,omitempty"`
	IndexDelete *indexDeleteCmd      `json:"index_delete,omitempty"`
}

// SchemaPlan builds the steps of one plan against this node's schema.
type SchemaPlan struct {
	sc      *Schema
	steps   []SchemaStep
	expect  map[string]int64     // collection id -> version validated against
	pending []*schema.Collection // saved by earlier steps, final form
	infos   []*Coll              // the same, for rule checks
}

// NewPlan starts an empty plan.
func (sc *Schema) NewPlan() *SchemaPlan {
	return &SchemaPlan{sc: sc, expect: map[string]int64{}}
}

// Steps are the plan's steps in order.
func (p *SchemaPlan) Steps() []SchemaStep { return p.steps }

// Expect maps each collection the plan changes to the version it was
// validated against; ApplyPlan refuses the plan if one has moved.
func (p *SchemaPlan) Expect() map[string]int64 { return p.expect }

// pendingColl is the collection an earlier step saves under name, or nil.
func (p *SchemaPlan) pendingColl(name string) *schema.Collection {
	for _, c := range p.pending {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

func (p *SchemaPlan) saved(c *schema.Collection, viewCols []string) {
	p.pending = append(p.pending, c)
	if ci, err := newCollInfo(c, viewCols); err == nil {
		p.infos = append(p.infos, ci)
	}
}

// decodeDefinition decodes a collection's JSON definition.
func decodeDefinition(body []byte) (*schema.Collection, error) {
	if d := schema.CheckDefinition(body); d != nil {
		return nil, ValidationError(d)
	}
	var c schema.Collection
	if err := decodeStrict(body, &c); err != nil {
		return nil, err
	}
	if c.Fields == nil {
		c.Fields = []*schema.Field{}
	}
	return &c, nil
}

// viewFields infers a view's fields. A query that reads a collection the
// plan creates cannot be probed before the plan runs: it then keeps the
// fields of the definition (typed as sent), and the apply checks the
// query and derives the columns in its transaction (refreshViewQueries).
func (p *SchemaPlan) viewFields(ctx context.Context, c *schema.Collection) ([]string, *Error) {
	fields, cols, verr := p.sc.inferView(ctx, c.ViewQuery)
	if verr == nil {
		c.Fields = fields
		return cols, nil
	}
	if len(p.pending) == 0 {
		return nil, verr
	}
	cols = []string{"id"}
	for _, f := range c.Fields {
		f.ID = "fld_view_" + strings.ToLower(f.Name)
		cols = append(cols, f.Name)
	}
	return cols, nil
}

// Create adds the creation of a collection from its definition (no id;
// relation targets may be names, of collections that exist or that the
// plan creates earlier).
func (p *SchemaPlan) Create(ctx context.Context, body []byte) error {
	c, err := decodeDefinition(body)
	if err != nil {
		return err
	}
	if c.Type == "" {
		c.Type = schema.TypeBase
	}
	now := p.sc.e.now().Unix()
	c.ID = "col_" + NewID()
	c.Created, c.Updated = now, now
	if p.pendingColl(c.Name) != nil {
		return FieldError("name", "appears twice in the plan")
	}
	viewCols, verr := p.check(ctx, c, nil)
	if verr != nil {
		return verr
	}
	p.steps = append(p.steps, SchemaStep{Create: &collectionCreateCmd{Collection: *c, ViewColumns: viewCols}})
	p.saved(c, viewCols)
	return nil
}

// Update adds the replacement of collection name's definition by body
// (the whole definition: fields sent without id keep the id of the
// same-named field, so their data stays).
func (p *SchemaPlan) Update(ctx context.Context, name string, body []byte) error {
	old := p.sc.e.Coll(name)
	if old == nil {
		return ErrNotFound
	}
	c, err := decodeDefinition(body)
	if err != nil {
		return err
	}
	c.ID, c.Created, c.Version = old.ID, old.Created, old.Version
	c.Updated = max(p.sc.e.now().Unix(), old.Updated)
	viewCols, verr := p.check(ctx, c, old)
	if verr != nil {
		return verr
	}
	p.steps = append(p.steps, SchemaStep{Update: &collectionUpdateCmd{ID: old.ID, Version: old.Version, Collection: *c, ViewColumns: viewCols}})
	p.expect[old.ID] = old.Version
	p.saved(c, viewCols)
	return nil
}

// Delete adds the removal of collection name and its table.
func (p *SchemaPlan) Delete(name string) error {
	ci := p.sc.e.Coll(name)
	if ci == nil {
		return ErrNotFound
	}
	p.steps = append(p.steps, SchemaStep{Delete: &collectionDeleteCmd{ID: ci.ID, Version: ci.Version}})
	p.expect[ci.ID] = ci.Version
	return nil
}

// collID is the id of collection name: one the plan saves, or one that
// exists.
func (p *SchemaPlan) collID(name string) (string, error) {
	if c := p.pendingColl(name); c != nil {
		return c.ID, nil
	}
	if ci := p.sc.e.Coll(name); ci != nil {
		p.expect[ci.ID] = ci.Version
		return ci.ID, nil
	}
	return "", ErrNotFound
}

// CreateIndex adds a managed index on one field of collection coll
// (idx_<coll>_<field>, or uniq_ when unique), after the steps before it.
func (p *SchemaPlan) CreateIndex(coll, field string, unique bool) error {
	id, err := p.collID(coll)
	if err != nil {
		return err
	}
	prefix := "idx_"
	if unique {
		prefix = "uniq_"
	}
	name := prefix + coll + "_" + field
	if !managedIndexName.MatchString(name) {
		return FieldError("field", "index name would be too long or invalid: "+name)
	}
	p.steps = append(p.steps, SchemaStep{IndexCreate: &indexCreateCmd{Coll: id, Field: field, Name: name, Unique: unique}})
	return nil
}

// DeleteIndex adds the removal of managed index ixName of coll.
func (p *SchemaPlan) DeleteIndex(coll, ixName string) error {
	id, err := p.collID(coll)
	if err != nil {
		return err
	}
	if !managedIndexName.MatchString(ixName) {
		return Errorf(KindNotFound, "Only indexes named idx_... or uniq_... are managed")
	}
	p.steps = append(p.steps, SchemaStep{IndexDelete: &indexDeleteCmd{Coll: id, Name: ixName}})
	return nil
}

// ApplyPlan applies steps in the caller's command transaction: first it
// checks that every collection the plan was validated against is still
// at its version (else ErrSchemaMoved: the proposer plans again), then
// runs each step through its command's handler, at the version the
// earlier steps left, and finally refreshes the view collections. The
// first failure fails the whole command, which rolls back.
func (sc *Schema) ApplyPlan(tx *fsm.Tx, expect map[string]int64, steps []SchemaStep) error {
	ids := make([]string, 0, len(expect))
	for id := range expect {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		v, err := collVersionTx(tx, id)
		if err != nil || v != expect[id] {
			return FirstErr(err, ErrSchemaMoved)
		}
	}
	for i, st := range steps {
		if err := sc.applyStep(tx, st); err != nil {
			return stepError(i, err)
		}
	}
	return refreshViewQueries(tx)
}

// stepError names the failed step in a domain error's details.
func stepError(i int, err error) error {
	if errors.Is(err, ErrSchemaMoved) {
		return err // as it is: the proposer plans again
	}
	de := AsError(err)
	if de == nil {
		return fmt.Errorf("step %d: %w", i, err)
	}
	out := *de
	d := map[string]any{"step": i}
	for k, v := range de.Details {
		d[k] = v
	}
	out.Details = d
	return &out
}

// collVersionTx is the version of collection id as tx sees it
// (ErrSchemaMoved when it is gone).
func collVersionTx(tx *fsm.Tx, id string) (int64, error) {
	var v int64
	err := tx.QueryRow(`SELECT version FROM _svc_collections WHERE id = ?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrSchemaMoved
	}
	return v, err
}

func (sc *Schema) applyStep(tx *fsm.Tx, st SchemaStep) error {
	var (
		t       fsm.Type
		payload any
		h       fsm.Handler
		err     error
	)
	switch {
	case st.Create != nil:
		t, payload, h = cmdCollectionCreate, st.Create, sc.applyCollectionCreate
	case st.Update != nil:
		st.Update.Version, err = collVersionTx(tx, st.Update.ID)
		t, payload, h = cmdCollectionUpdate, st.Update, sc.applyCollectionUpdate
	case st.Delete != nil:
		st.Delete.Version, err = collVersionTx(tx, st.Delete.ID)
		t, payload, h = cmdCollectionDelete, st.Delete, sc.applyCollectionDelete
	case st.IndexCreate != nil:
		st.IndexCreate.Ver, err = collVersionTx(tx, st.IndexCreate.Coll)
		t, payload, h = cmdIndexCreate, st.IndexCreate, sc.applyIndexCreate
	case st.IndexDelete != nil:
		st.IndexDelete.Ver, err = collVersionTx(tx, st.IndexDelete.Coll)
		t, payload, h = cmdIndexDelete, st.IndexDelete, sc.applyIndexDelete
	default:
		return fmt.Errorf("%w: empty schema step", fsm.ErrHalt)
	}
	if err != nil {
		return err
	}
	cmd, err := encodeCmd(t, payload)
	if err != nil {
		return err
	}
	_, err = h(tx, cmd)
	return err
}

// check validates c (replacing old, nil for a new collection) against the
// schema as the plan leaves it: its definition, a view's fields (a view
// takes no write rules) and its rules. It returns a view's columns.
func (p *SchemaPlan) check(ctx context.Context, c *schema.Collection, old *Coll) ([]string, error) {
	if verr := p.sc.validateCollectionIn(c, old, false, p.pending); verr != nil {
		return nil, verr
	}
	var viewCols []string
	if c.Type == schema.TypeView {
		var verr *Error
		if viewCols, verr = p.viewFields(ctx, c); verr != nil {
			return nil, verr
		}
		c.CreateRule, c.UpdateRule, c.DeleteRule = nil, nil, nil
	}
	if verr := p.sc.checkRulesIn(c, viewCols, old, p.infos); verr != nil {
		return nil, verr
	}
	return viewCols, nil
}
