package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"svcd/engine"
	"svcd/engine/schema"
)

// MaxPerPage is the largest page of history entries.
const MaxPerPage = 200

var (
	errHistoryOff    = engine.Errorf(engine.KindNotFound, "History is not enabled for this collection")
	errNoHistoryAt   = engine.Errorf(engine.KindNotFound, "The record has no history at or before that time")
	errRestoreAtMiss = engine.FieldError("at", "required: unix seconds")
	errRestoreGone   = engine.Errorf(engine.KindConflict, "The record is deleted; restore applies to an existing record")
)

// Page is one page of a record's history, newest first; Data is the JSON
// array of entries.
type Page struct {
	Data       []byte
	Page       int
	PerPage    int
	TotalItems int
	TotalPages int
}

// RecordHistory reads a page of the history of record id of collection
// name, newest first. It inherits the view rule: a caller who may not view
// the record gets what a GET would answer; the history of a deleted record
// is for admins. Snapshots are rendered as the caller may read records
// (hidden fields for admins only) against the collection's current fields.
func (h *History) RecordHistory(ctx context.Context, p engine.Principal, name, id string, page, perPage int) (*Page, error) {
	ci := h.core.Coll(name)
	if ci == nil {
		return nil, engine.ErrNotFound
	}
	if !ci.HistoryEnabled || ci.Type == schema.TypeView {
		return nil, errHistoryOff
	}
	page = max(page, 1)
	if perPage < 1 {
		perPage = engine.DefaultPerPage
	}
	perPage = min(perPage, MaxPerPage)
	out := &Page{Page: page, PerPage: perPage}
	err := h.core.ReadAs(ctx, p, func(rd *engine.Reading) error {
		r := rd.SQL()
		if !rd.Bypass(ci) {
			if _, err := rd.Record(ci, id, "id", ""); err != nil {
				return err
			}
		}
		if err := r.QueryRow(`SELECT count(*) FROM _svc_history WHERE collection_id = ? AND record_id = ?`, ci.ID, id).Scan(&out.TotalItems); err != nil {
			return err
		}
		if out.TotalItems == 0 && rd.Bypass(ci) {
			// No history: the record exists (created before history was
			// turned on) or is unknown.
			if _, err := rd.Record(ci, id, "id", ""); err != nil {
				return err
			}
		}
		out.TotalPages = (out.TotalItems + perPage - 1) / perPage
		rows, err := r.Query(`SELECT id, op, at, snapshot, actor_id, actor_type, via FROM _svc_history
			WHERE collection_id = ? AND record_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
			ci.ID, id, perPage, int64(page-1)*int64(perPage))
		if err != nil {
			return err
		}
		defer rows.Close()
		buf := append(make([]byte, 0, 1024), '[')
		for n := 0; rows.Next(); n++ {
			var hid, at int64
			var op, snap, actorID, actorType, via string
			if err := rows.Scan(&hid, &op, &at, &snap, &actorID, &actorType, &via); err != nil {
				return err
			}
			row, err := snapshotRow(ci, snap)
			if err != nil {
				return err
			}
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = appendHistoryEntry(buf, ci, hid, id, op, at, row, historyActor{actorID, actorType, via}, rd.Bypass(ci))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		out.Data = append(buf, ']')
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// historyActor is who made a change: the actor's id and type, and the
// code that made it for the actor (empty: none).
type historyActor struct{ id, typ, via string }

func appendHistoryEntry(buf []byte, ci *engine.Coll, hid int64, recordID, op string, at int64, row []any, a historyActor, admin bool) []byte {
	buf = append(buf, `{"id":`...)
	buf = strconv.AppendInt(buf, hid, 10)
	buf = append(buf, `,"collection":`...)
	buf = schema.AppendJSONString(buf, ci.Name)
	buf = append(buf, `,"record_id":`...)
	buf = schema.AppendJSONString(buf, recordID)
	buf = append(buf, `,"op":`...)
	buf = schema.AppendJSONString(buf, op)
	buf = append(buf, `,"at":`...)
	buf = strconv.AppendInt(buf, at, 10)
	buf = append(buf, `,"snapshot":`...)
	buf = ci.AppendRecord(buf, row, admin)
	buf = append(buf, `,"actor_id":`...)
	buf = schema.AppendJSONString(buf, a.id)
	buf = append(buf, `,"actor_type":`...)
	buf = schema.AppendJSONString(buf, a.typ)
	if a.via != "" {
		buf = append(buf, `,"via":`...)
		buf = schema.AppendJSONString(buf, a.via)
	}
	return append(buf, '}')
}

// Restored is what a restore answers: the record as updated, and the
// files the snapshot names that could not be restored (their bytes may be
// gone: removed more than files.delete_grace_seconds ago), in field
// order.
type Restored struct {
	Record       *engine.Record
	MissingFiles []MissingFile
}

// MissingFile is a file a restored snapshot names that the record does
// not hold again.
type MissingFile struct {
	Field    string `json:"field"`
	Filename string `json:"filename"`
}

// RestoreRecord applies the snapshot of record id kept at or before at
// (unix seconds; atText as the client sent it) as an update by admin p:
// every field the collection still has takes the snapshot's value; id and
// timestamps are not restored; passwords are never in history. The update
// is an ordinary one (rules aside, as for any admin write), so it adds its
// own history entry. File fields take the snapshot's files back through
// the FileRestorer: a file removed since comes back while its bytes are
// kept (the grace period); one whose bytes may be gone is left out and
// listed in MissingFiles.
func (h *History) RestoreRecord(ctx context.Context, p engine.Principal, name, id, atText string) (*Restored, uint64, error) {
	ci := h.core.Coll(name)
	if ci == nil {
		return nil, 0, engine.ErrNotFound
	}
	if !ci.HistoryEnabled || ci.Type == schema.TypeView {
		return nil, 0, errHistoryOff
	}
	if !p.IsAdmin() {
		return nil, 0, engine.ErrAdminOnly
	}
	at, err := strconv.ParseInt(atText, 10, 64)
	if err != nil {
		return nil, 0, errRestoreAtMiss
	}
	var row []any
	var etag string
	err = h.core.ReadAs(ctx, p, func(rd *engine.Reading) error {
		r := rd.SQL()
		cur, err := rd.Record(ci, id, "", "")
		if errors.Is(err, engine.ErrNotFound) {
			var n int
			if err := r.QueryRow(`SELECT count(*) FROM _svc_history WHERE collection_id = ? AND record_id = ?`, ci.ID, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return errRestoreGone
			}
			return engine.ErrNotFound
		}
		if err != nil {
			return err
		}
		etag = cur.ETag
		var snap string
		err = r.QueryRow(`SELECT snapshot FROM _svc_history WHERE collection_id = ? AND record_id = ? AND at <= ?
			ORDER BY at DESC, id DESC LIMIT 1`, ci.ID, id, at).Scan(&snap)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return errNoHistoryAt
			}
			return err
		}
		row, err = snapshotRow(ci, snap)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	body, err := restoreBody(ci, row)
	if err != nil {
		return nil, 0, err
	}
	// Conditional on the record read here: a change in between is a 412,
	// not silently overwritten.
	if h.files == nil || !hasFileFields(ci) {
		rec, idx, err := h.core.Records().UpdateRecord(ctx, p, name, id, body, etag)
		if err != nil {
			return nil, idx, err
		}
		return &Restored{Record: rec}, idx, nil
	}
	values, err := engine.DecodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	files := takeFileNames(ci, values)
	rec, missing, idx, err := h.files.RestoreRecord(ctx, p, name, id, values, files, etag)
	if err != nil {
		return nil, idx, err
	}
	out := &Restored{Record: rec}
	for _, f := range ci.RowFields() {
		for _, n := range missing[f.Name] {
			out.MissingFiles = append(out.MissingFiles, MissingFile{Field: f.Name, Filename: n})
		}
	}
	return out, idx, nil
}

// hasFileFields reports whether ci has a file field.
func hasFileFields(ci *engine.Coll) bool {
	for _, f := range ci.RowFields() {
		if f.Type == schema.FieldFile && !f.System() {
			return true
		}
	}
	return false
}

// takeFileNames moves the file fields out of a restore's body: the names
// each held in the snapshot (none when it was empty), by field name.
func takeFileNames(ci *engine.Coll, body map[string]any) map[string][]string {
	out := map[string][]string{}
	for _, f := range ci.RowFields() {
		if f.Type != schema.FieldFile || f.System() {
			continue
		}
		var names []string
		switch v := body[f.Name].(type) {
		case string:
			if v != "" {
				names = []string{v}
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && s != "" {
					names = append(names, s)
				}
			}
		}
		delete(body, f.Name)
		out[f.Name] = names
	}
	return out
}

// restoreBody is the update body of a restore: the snapshot as an admin
// reads it, without id, timestamps and fields set by the server.
func restoreBody(ci *engine.Coll, row []any) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ci.AppendRecord(nil, row, true), &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "created", "updated", "collectionId", "collectionName", "expand"} {
		delete(m, k)
	}
	for _, f := range ci.RowFields() {
		if f.System() || f.Private() || f.Type == schema.FieldAutodate {
			delete(m, f.Name)
		}
	}
	return json.Marshal(m)
}
