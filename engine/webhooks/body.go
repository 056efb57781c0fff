package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"svcd/engine"
	"svcd/engine/crypt"
	"svcd/engine/schema"
)

// The body of a delivery (SPEC.md "Webhook events"):
//
//	{"id": "<delivery uuid>", "event": "posts.create", "timestamp": 1700000000, "data": {...}}
//
// timestamp is the event's time (unix seconds: the change's or the
// dispatch's), the same in every attempt; the time of the attempt is the
// x-svc-timestamp header. data is {"record": {...}} for a record's create
// and update, {"id": "<record id>", "record": {...}} for a delete (the
// record as it was before), and the dispatched value for a custom event.
// The record is rendered when the delivery is sent, as an admin reads it
// through the API: hidden fields shown, encrypted ones decrypted, password
// hashes never (they are not even kept), with the collection's fields as
// they are at send time (a field added since is null, a removed one is
// gone). The body is built once per attempt and signed as sent.

// body builds the JSON body of attempt a.
func (m *Webhooks) body(a *Attempt) ([]byte, error) {
	data := json.RawMessage(a.payload)
	if a.collID != "" {
		rec, id, err := m.renderRecord(a.payload)
		if err != nil {
			return nil, err
		}
		obj := map[string]json.RawMessage{"record": rec}
		if strings.HasSuffix(a.event, ".delete") {
			obj["id"], _ = json.Marshal(id)
		}
		var err2 error
		if data, err2 = json.Marshal(obj); err2 != nil {
			return nil, err2
		}
	}
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Timestamp int64           `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{a.DeliveryID, a.event, a.at, data})
}

// renderRecord renders a kept snapshot as an admin reads the record, and
// answers the record's id.
func (m *Webhooks) renderRecord(payload []byte) ([]byte, string, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var s snapshot
	if err := dec.Decode(&s); err != nil {
		return nil, "", fmt.Errorf("webhooks: record snapshot: %w", err)
	}
	ci := m.core.Coll(s.Coll)
	if ci == nil {
		// The collection was dropped since: the fields as kept.
		return m.renderKept(&s), s.ID, nil
	}
	fields := ci.RowFields()
	row := make([]any, 3+len(fields))
	row[0] = s.ID
	row[1], _ = engine.StoredValue(schema.ColInteger, s.Created)
	row[2], _ = engine.StoredValue(schema.ColInteger, s.Updated)
	for i, f := range fields {
		if v, ok := s.Fields[f.Name]; ok && !f.Private() {
			row[3+i], _ = engine.StoredValue(f.ColumnType(), v)
		}
	}
	return m.core.Records().Render(ci, row, true).JSON, s.ID, nil
}

// renderKept renders a snapshot of a collection that no longer exists:
// its fields in name order, sealed values opened when this node can.
func (m *Webhooks) renderKept(s *snapshot) []byte {
	obj := map[string]any{"id": s.ID, "collectionId": s.Coll, "collectionName": s.Name, "created": s.Created, "updated": s.Updated}
	names := make([]string, 0, len(s.Fields))
	for k := range s.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := s.Fields[k]
		if str, ok := v.(string); ok && crypt.IsSealed(str) && m.keyring != nil {
			if plain, err := m.keyring.Open(str); err == nil {
				v = plain
			}
		}
		if _, taken := obj[k]; !taken {
			obj[k] = v
		}
	}
	b, _ := json.Marshal(obj)
	return b
}
