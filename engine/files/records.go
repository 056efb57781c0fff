package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// Multipart record writes (SPEC.md Files rule 1; issue 18): a record
// created or updated with its files in one request on the record
// endpoints, as PocketBase's clients send it. Plain form values are the
// record's fields (converted by field type), "@jsonPayload" holds a JSON
// object of fields, and file parts name their file field: on an update
// "field" replaces the field's files, "field+" appends, and a plain value
// "field-" names a file to remove ("field" sent empty clears it). The
// create rule (or update rule) decides, at apply time, with the new file
// names visible to @request.body.

// formBudget bounds the plain values of one multipart request (bytes).
const formBudget = 1 << 20

// multipartForm is a parsed multipart record write.
type multipartForm struct {
	body    map[string]any
	changes map[string]*fieldChange // by field id
	order   []string                // field ids in first-seen order
	metas   []fileMeta
	// anonFiles admits file parts from an anonymous caller (PocketBase's
	// semantics: the create rule alone decides, at apply).
	anonFiles bool
}

func (mf *multipartForm) change(f *engine.FieldInfo) *fieldChange {
	if ch := mf.changes[f.ID]; ch != nil {
		return ch
	}
	ch := &fieldChange{Field: f.ID}
	mf.changes[f.ID] = ch
	mf.order = append(mf.order, f.ID)
	return ch
}

func (mf *multipartForm) changeList() []fieldChange {
	out := make([]fieldChange, 0, len(mf.order))
	for _, id := range mf.order {
		out = append(out, *mf.changes[id])
	}
	return out
}

// readForm reads every part: plain values into the body, files stored
// as they arrive (the caller discards them on failure). update selects
// the update's meaning of a file field's name.
func (m *Files) readForm(ctx context.Context, p engine.Principal, ci *engine.Coll, parts Parts, update, anonFiles bool, store BlobStore, driver string) (*multipartForm, error) {
	mf := &multipartForm{body: map[string]any{}, changes: map[string]*fieldChange{}, anonFiles: anonFiles}
	plain := map[string][]string{}
	var plainOrder []string
	budget := int64(formBudget)
	for {
		part, err := parts.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return mf, err
		}
		if part.FileName != "" {
			if err := m.formFile(ctx, p, ci, part, update, store, driver, mf); err != nil {
				return mf, err
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part.Body, budget+1))
		if err != nil {
			return mf, err
		}
		if budget -= int64(len(b)); budget < 0 {
			return mf, engine.Errorf(engine.KindTooLarge, "The form's values are too large (limit %d bytes)", formBudget)
		}
		if part.Name == "@jsonPayload" {
			obj, err := engine.DecodeBody(b)
			if err != nil {
				return mf, err
			}
			for k, v := range obj {
				mf.body[k] = v
			}
			continue
		}
		if _, seen := plain[part.Name]; !seen {
			plainOrder = append(plainOrder, part.Name)
		}
		plain[part.Name] = append(plain[part.Name], string(b))
	}
	for _, key := range plainOrder {
		vals := plain[key]
		name, suffix := splitModifier(key)
		if f, _ := fileField(ci, name); f != nil {
			if err := formFileValue(f, suffix, vals, update, mf); err != nil {
				return mf, err
			}
			continue
		}
		mf.body[key] = formValue(valueField(ci, key), vals)
	}
	// A file field in the JSON payload: null or "" clears it, names
	// (PocketBase's way of keeping some) keep only those.
	for _, f := range ci.RowFields() {
		v, ok := mf.body[f.Name]
		if !ok || f.Type != schema.FieldFile {
			continue
		}
		delete(mf.body, f.Name)
		if err := formFileValue(f, "", jsonNames(v), update, mf); err != nil {
			return mf, err
		}
	}
	return mf, nil
}

// formFile stores one file part for the field its name names.
func (m *Files) formFile(ctx context.Context, p engine.Principal, ci *engine.Coll, part *Part, update bool, store BlobStore, driver string, mf *multipartForm) error {
	if p.Kind == engine.Anonymous && !mf.anonFiles {
		return errAuthRequired
	}
	name, suffix := splitModifier(part.Name)
	f, _ := fileField(ci, name)
	if f == nil || suffix == "-" {
		return engine.FieldError(part.Name, "is not a file field of "+ci.Name)
	}
	ch := mf.change(f)
	if update && suffix == "" {
		ch.Clear = true // "field" replaces, "field+" appends
	}
	if !f.Multiple && len(ch.Add) == 1 {
		return errSecondFile(f.Name)
	}
	meta, err := m.store(ctx, store, driver, f, part)
	if err != nil {
		return err
	}
	mf.metas = append(mf.metas, meta)
	ch.Add = append(ch.Add, meta.Name)
	return nil
}

// formFileValue applies plain values sent for file field f: "field-"
// names files to remove; "field" empty clears the field, "field" with
// names keeps only those (an update's way to drop the others).
func formFileValue(f *engine.FieldInfo, suffix string, vals []string, update bool, mf *multipartForm) error {
	if !update {
		for _, v := range vals {
			if v != "" {
				return engine.FieldError(f.Name, "files are sent as file parts")
			}
		}
		return nil
	}
	ch := mf.change(f)
	switch suffix {
	case "-":
		for _, v := range vals {
			if v != "" {
				ch.Remove = append(ch.Remove, v)
			}
		}
	case "":
		var keep []string
		for _, v := range vals {
			if v != "" {
				keep = append(keep, v)
			}
		}
		if len(keep) > 0 {
			return engine.FieldError(f.Name, `name the files to remove with "`+f.Name+`-"; an empty value clears the field`)
		}
		ch.Clear = true
	default:
		return engine.FieldError(f.Name+suffix, "files are appended as file parts")
	}
	return nil
}

// CreateRecord creates a record of coll from a multipart form, with its
// files, in one command. An anonymous caller may not send files.
func (m *Files) CreateRecord(ctx context.Context, p engine.Principal, coll string, parts Parts) (*engine.Record, uint64, error) {
	return m.createRecord(ctx, p, coll, parts, false)
}

// CreateRecordPublic is CreateRecord with PocketBase's semantics: an
// anonymous caller may send files too, and the create rule decides at
// apply (a public rule admits the record and its files; a refusal
// discards the stored files). The fields' limits apply as for anyone.
func (m *Files) CreateRecordPublic(ctx context.Context, p engine.Principal, coll string, parts Parts) (*engine.Record, uint64, error) {
	return m.createRecord(ctx, p, coll, parts, true)
}

func (m *Files) createRecord(ctx context.Context, p engine.Principal, coll string, parts Parts, anonFiles bool) (*engine.Record, uint64, error) {
	rs := m.core.Records()
	ci, err := rs.Writable(coll)
	if err != nil {
		return nil, 0, err
	}
	admin, err := engine.WriteRights(p, ci)
	if err != nil {
		return nil, 0, err
	}
	if !admin && ci.CreateRule == nil {
		return nil, 0, engine.ErrAdminOnly
	}
	store, driver, err := m.currentStore(ctx)
	if err != nil {
		return nil, 0, err
	}
	mf, err := m.readForm(ctx, p, ci, parts, false, anonFiles, store, driver)
	if err != nil {
		m.discard(store, mf.metas)
		return nil, 0, err
	}
	// Hooks see the form's other fields; the files are stored already
	// and go with the record if the hooks let it be written.
	w, err := rs.BeforeWrite(ctx, p, engine.EvRecordCreate, coll, "", mf.body)
	if err != nil {
		m.discard(store, mf.metas)
		return nil, 0, err
	}
	if w != nil {
		mf.body = withoutFileFields(ci, w.Body)
	}
	for attempt := 0; ; attempt++ {
		if ci, err = rs.Writable(coll); err != nil {
			break
		}
		extra := map[string]any{}
		for _, ch := range mf.changeList() {
			f, _ := fieldByID(ci, ch.Field)
			if f == nil {
				err = errNoFileField
				break
			}
			extra[f.Name] = storedValue(f.Multiple, ch.Add)
		}
		if err != nil {
			break
		}
		body, verr := engine.FoldCreateModifiers(ci, mf.body)
		if verr != nil {
			err = verr
			break
		}
		var rc *engine.RecordCreate
		if rc, err = rs.PrepareCreate(p, ci, body, extra, m.core.Now().Unix()); err != nil {
			break
		}
		var res any
		var idx uint64
		res, idx, err = m.core.Propose(ctx, cmdCreate, createCmd{Coll: ci.ID, Ver: ci.Version, Create: rc, Files: mf.metas})
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			if definite(err) {
				m.discard(store, mf.metas)
			}
			return nil, idx, err
		}
		rs.AfterWrite(ctx, w, rc.ID())
		return rs.Render(ci, res.(engine.Row), rc.Admin()), idx, nil
	}
	m.discard(store, mf.metas)
	return nil, 0, err
}

// UpdateRecord changes record id of coll from a multipart form: its
// fields and files in one command, under the update rule and If-Match.
func (m *Files) UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, parts Parts, ifMatch string) (*engine.Record, uint64, error) {
	rs := m.core.Records()
	ci, err := rs.Writable(coll)
	if err != nil {
		return nil, 0, err
	}
	admin, err := engine.WriteRights(p, ci)
	if err != nil {
		return nil, 0, err
	}
	if err := m.checkWrite(ctx, p, ci, id, admin, ci.UpdateRule); err != nil {
		return nil, 0, err
	}
	store, driver, err := m.currentStore(ctx)
	if err != nil {
		return nil, 0, err
	}
	mf, err := m.readForm(ctx, p, ci, parts, true, false, store, driver)
	if err == nil && ci.Type == schema.TypeAuth {
		err = accountFieldsAsJSON(mf.body)
	}
	if err != nil {
		m.discard(store, mf.metas)
		return nil, 0, err
	}
	w, err := rs.BeforeWrite(ctx, p, engine.EvRecordUpdate, coll, id, mf.body)
	if err != nil {
		m.discard(store, mf.metas)
		return nil, 0, err
	}
	if w != nil {
		mf.body = withoutFileFields(ci, w.Body)
		if ci.Type == schema.TypeAuth {
			err = accountFieldsAsJSON(mf.body)
		}
	}
	if err != nil {
		m.discard(store, mf.metas)
		return nil, 0, err
	}
	res, idx, err := m.proposeChange(ctx, p, coll, id, ifMatch, mf.body, mf.changeList(), mf.metas, false)
	if err != nil {
		if definite(err) {
			m.discard(store, mf.metas)
		}
		return nil, idx, err
	}
	rs.AfterWrite(ctx, w, id)
	if ci, err = rs.Writable(coll); err != nil {
		return nil, idx, err
	}
	return rs.Render(ci, res.(engine.Row), admin), idx, nil
}

// withoutFileFields is body without ci's file fields: a hook of a
// multipart write changes the other fields; the files are the form's.
func withoutFileFields(ci *engine.Coll, body map[string]any) map[string]any {
	for _, f := range ci.RowFields() {
		if f.Type == schema.FieldFile {
			delete(body, f.Name)
		}
	}
	return body
}

// accountFieldsAsJSON refuses account fields in a multipart update of an
// auth record: they have their own rules (old password, verification),
// applied by the JSON update.
func accountFieldsAsJSON(body map[string]any) error {
	for _, k := range []string{"email", "password", "passwordConfirm", "oldPassword", "email_verified"} {
		if _, ok := body[k]; ok {
			return &engine.Error{Kind: engine.KindBadRequest, Message: "Change account fields (email, password) with a JSON update",
				Details: map[string]any{k: "send it in a JSON body"}}
		}
	}
	return nil
}

// splitModifier splits "name+" and "name-" into the name and the suffix.
func splitModifier(key string) (string, string) {
	if n := len(key); n > 1 && (key[n-1] == '+' || key[n-1] == '-') {
		return key[:n-1], key[n-1:]
	}
	return key, ""
}

// valueField is the field a plain form value of key is converted for:
// the field named key, or the one a write modifier ("views+", "views-",
// "+tags") names, whose operand converts as the field's own value does
// (the engine applies the modifier: engine/record_modifiers.go).
func valueField(ci *engine.Coll, key string) *engine.FieldInfo {
	if f := fieldNamed(ci, key); f != nil {
		return f
	}
	name := strings.TrimPrefix(key, "+")
	if name == key {
		name, _ = splitModifier(key)
	}
	if name == key {
		return nil
	}
	return fieldNamed(ci, name)
}

// fieldNamed finds any field of ci by name (nil: none).
func fieldNamed(ci *engine.Coll, name string) *engine.FieldInfo {
	for _, f := range ci.RowFields() {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// jsonNames reads a file field's value from a JSON payload: null, a name,
// or names.
func jsonNames(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// formValue converts the plain values of a form field to the input its
// field type takes, as a JSON body would carry it; what does not convert
// is passed on as text for the field's own validation to refuse.
func formValue(f *engine.FieldInfo, vals []string) any {
	if f == nil {
		if len(vals) == 1 {
			return vals[0]
		}
		return toAny(vals)
	}
	v := vals[len(vals)-1]
	switch f.Type {
	case schema.FieldNumber, schema.FieldDate:
		if v == "" {
			return nil
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
		return v
	case schema.FieldBool:
		switch strings.ToLower(v) {
		case "", "0", "false", "off":
			return false
		case "1", "true", "on":
			return true
		}
		return v
	case schema.FieldJSON, schema.FieldGeoPoint, schema.FieldVector:
		if v == "" {
			return nil
		}
		if x, err := decodeJSONValue(v); err == nil {
			return x
		}
		return v
	case schema.FieldSelect, schema.FieldRelation:
		if !f.Multiple {
			if v == "" {
				return nil
			}
			return v
		}
		if len(vals) == 1 && strings.HasPrefix(strings.TrimSpace(v), "[") {
			if x, err := decodeJSONValue(v); err == nil {
				return x
			}
		}
		var out []any
		for _, s := range vals {
			if s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return v
}

func toAny(vals []string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// decodeJSONValue decodes one JSON value with numbers kept exact.
func decodeJSONValue(s string) (any, error) {
	obj, err := engine.DecodeBody([]byte(`{"v":` + s + `}`))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return obj["v"], nil
}
