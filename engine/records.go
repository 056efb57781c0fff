package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	fastjson "github.com/segmentio/encoding/json"

	"svcd/engine/schema"
)

// writable returns the collection for a record write, or the error.
func (rs *Records) writable(name string) (*Coll, error) {
	ci := rs.e.Coll(name)
	if ci == nil {
		return nil, ErrNotFound
	}
	if ci.Type == schema.TypeView {
		return nil, errViewWrite
	}
	return ci, nil
}

// bodyEnv is @request.body for rules: the stored values of the fields the
// request sent (never passwords or other private fields). Nil when no
// rule of ci reads @request.body (envFor would drop it).
func bodyEnv(ci *Coll, in map[string]any, values func(i int) any) map[string]any {
	if !ci.rulesUse.body {
		return nil
	}
	out := map[string]any{}
	for i, f := range ci.fields {
		if _, sent := in[f.Name]; sent && !f.private {
			out[f.Name] = values(i)
		}
	}
	return out
}

// decodeBody parses a JSON object body for a record write, numbers kept
// exact (json.Number). segmentio's parser is encoding/json's behavior at
// about twice its speed (the batch route uses it too, api/batch_parse.go).
func decodeBody(body []byte) (map[string]any, error) {
	var m map[string]any
	rest, err := fastjson.Parse(body, &m, fastjson.UseNumber)
	if err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, Errorf(KindBadRequest, "Expected a JSON object")
		}
		return nil, Errorf(KindBadRequest, "Invalid JSON body: %v", err)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, Errorf(KindBadRequest, "Invalid JSON body: trailing data")
	}
	if m == nil {
		return nil, Errorf(KindBadRequest, "Expected a JSON object")
	}
	return m, nil
}

// writeRights answers whether p writes ci as an admin (rules bypassed), or
// ErrInsufficientScope for an API token without write scope on it.
func writeRights(p Principal, ci *Coll) (admin bool, err error) {
	if !p.HasScope(ci.Name, true) {
		return false, ErrInsufficientScope
	}
	return p.bypasses(ci.Name, true), nil
}

// CreateRecord validates body and creates a record in collection name.
func (rs *Records) CreateRecord(ctx context.Context, p Principal, name string, body []byte) (*Record, uint64, error) {
	in, err := decodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	w, err := rs.BeforeWrite(ctx, p, EvRecordCreate, name, "", in)
	if err != nil {
		return nil, 0, err
	}
	in = bodyOf(w, in)
	for attempt := 0; ; attempt++ {
		ci, err := rs.writable(name)
		if err != nil {
			return nil, 0, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return nil, 0, err
		}
		if !admin && ci.CreateRule == nil {
			return nil, 0, ErrAdminOnly
		}
		now := rs.e.now().Unix()
		plain, verr := FoldCreateModifiers(ci, in)
		if verr != nil {
			return nil, 0, verr
		}
		id, values, verr := rs.prepareCreate(ci, plain, admin, now)
		if verr != nil {
			return nil, 0, verr
		}
		env := rs.e.envFor(p, ci, bodyEnv(ci, plain, func(i int) any { return values[i] }), now)
		res, idx, err := rs.e.Propose(ctx, cmdRecordCreate, recordCreateCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, Now: now, Values: values, Env: env, Actor: actorOf(p),
		})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		rs.AfterWrite(ctx, w, id)
		return rs.record(ci, res.(Row), admin), idx, nil
	}
}

// UpdateRecord applies a partial change. ifMatch, when set, must match the
// record's current ETag at apply time.
func (rs *Records) UpdateRecord(ctx context.Context, p Principal, name, id string, body []byte, ifMatch string) (*Record, uint64, error) {
	in, err := decodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	w, err := rs.BeforeWrite(ctx, p, EvRecordUpdate, name, id, in)
	if err != nil {
		return nil, 0, err
	}
	in = bodyOf(w, in)
	for attempt := 0; ; attempt++ {
		ci, err := rs.writable(name)
		if err != nil {
			return nil, 0, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return nil, 0, err
		}
		// Answer a denied caller before validating, so a refusal never
		// reveals field names; the state machine decides again at apply.
		if err := preWriteError(ci, ci.UpdateRule, admin); err != nil {
			return nil, 0, err
		}
		now := rs.e.now().Unix()
		plain, mods, verr := SplitModifiers(ci, in)
		if verr != nil {
			return nil, 0, verr
		}
		values, verr := rs.PrepareUpdate(ci, plain, admin, now)
		if verr != nil {
			return nil, 0, verr
		}
		env := rs.e.envFor(p, ci, bodyEnv(ci, plain, func(i int) any { return values[ci.fields[i].Name] }), now)
		was, err := rs.verifyOldPassword(ctx, ci, id, plain, admin, env)
		if err != nil {
			return nil, 0, err
		}
		typ := cmdRecordUpdate
		if len(mods) > 0 {
			typ = cmdRecordUpdateMods
		}
		res, idx, err := rs.e.Propose(ctx, typ, recordUpdateCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, Now: now, Values: values, IfMatch: ifMatch, Env: env, Actor: actorOf(p),
			Account: true, PasswordWas: was, Mods: mods,
		})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		rs.AfterWrite(ctx, w, id)
		return rs.record(ci, res.(Row), admin), idx, nil
	}
}

// DeleteRecord deletes one record.
func (rs *Records) DeleteRecord(ctx context.Context, p Principal, name, id, ifMatch string) (uint64, error) {
	w, err := rs.BeforeWrite(ctx, p, EvRecordDelete, name, id, nil)
	if err != nil {
		return 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := rs.writable(name)
		if err != nil {
			return 0, err
		}
		admin, err := writeRights(p, ci)
		if err != nil {
			return 0, err
		}
		if err := preWriteError(ci, ci.DeleteRule, admin); err != nil {
			return 0, err
		}
		now := rs.e.now().Unix()
		_, idx, err := rs.e.Propose(ctx, cmdRecordDelete, recordDeleteCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, IfMatch: ifMatch, Now: now,
			Env: rs.e.envFor(p, ci, nil, now), Actor: actorOf(p),
		})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err == nil {
			rs.AfterWrite(ctx, w, id)
		}
		return idx, err
	}
}
