package webhooks

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"svcd/engine"
	"svcd/fsm"
)

// The outbox: deliveries are written by the state machine, in the
// transaction of the change that causes them. Everything here runs inside
// an apply and is deterministic: the webhooks matched are read from the
// transaction, in id order, and a delivery's id is derived from the
// webhook, the log index and the delivery's position in the command.

// Delivery states (CONTRACT.md: pending → succeeded | retrying → dead).
const (
	statePending   = "pending"
	stateSucceeded = "succeeded"
	stateRetrying  = "retrying"
	stateDead      = "dead"
)

// deliveryNamespace is the UUID namespace of delivery ids (version 5
// UUIDs of "<webhook id>:<log index>:<position>").
var deliveryNamespace = uuid.MustParse("5b0f6f1e-9d3c-4f43-8a55-2f1d7c0e9a61")

// deliveryID is the id of the delivery to webhook at position pos of the
// command at log index idx.
func deliveryID(webhook string, idx uint64, pos int64) string {
	return uuid.NewSHA1(deliveryNamespace, []byte(webhook+":"+strconv.FormatUint(idx, 10)+":"+strconv.FormatInt(pos, 10))).String()
}

// onRecordWrite queues the deliveries of one record change: event
// `<collection>.<create|update|delete>` to every enabled webhook with a
// matching pattern.
func (m *Webhooks) onRecordWrite(tx *fsm.Tx, w *engine.RecordWrite) error {
	// A log replayed from before this module's tables existed: nothing
	// can match (and the tables are not there to ask).
	if v, err := engine.InternalVersionTx(tx); err != nil || v < schemaVersion {
		return err
	}
	event := w.Coll.Name + "." + action(w.Kind)
	hooks, err := matching(tx, event)
	if err != nil || len(hooks) == 0 {
		return err
	}
	payload, err := recordPayload(w)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if _, err := queueDelivery(tx, h, event, w.Coll.ID, w.At, payload); err != nil {
			return err
		}
	}
	return nil
}

// action is the event suffix of a record event kind.
func action(kind string) string {
	switch kind {
	case engine.EvRecordCreate:
		return "create"
	case engine.EvRecordDelete:
		return "delete"
	}
	return "update"
}

// matching are the ids of the enabled webhooks with a pattern matching
// event, in id order.
func matching(tx *fsm.Tx, event string) ([]string, error) {
	cands := candidates(event)
	q := `SELECT DISTINCT w.id FROM _svc_webhook_patterns p JOIN _svc_webhooks w ON w.id = p.webhook_id
		WHERE w.enabled = 1 AND p.pattern IN (?` + repeat(",?", len(cands)-1) + `) ORDER BY w.id`
	rows, err := tx.Query(q, cands...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

// queueDelivery writes one pending delivery of event to webhook, due at
// once, and answers its id. at is the event's time (unix seconds); collID
// names the collection of a record event ("" for a custom one); payload
// is what the body's data is made from at send time (body.go).
func queueDelivery(tx *fsm.Tx, webhook, event, collID string, at int64, payload []byte) (string, error) {
	idx := tx.Index()
	// The position follows the last delivery this command queued: the
	// newest row, when it has this index (a nested savepoint that rolled
	// back took its rows with it, so positions stay the same everywhere).
	var lastIdx uint64
	var lastPos int64
	pos := int64(0)
	err := tx.QueryRow(`SELECT idx, pos FROM _svc_webhook_deliveries ORDER BY seq DESC LIMIT 1`).Scan(&lastIdx, &lastPos)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return "", err
	case lastIdx == idx:
		pos = lastPos + 1
	}
	id := deliveryID(webhook, idx, pos)
	_, err = tx.Exec(`INSERT INTO _svc_webhook_deliveries (id, webhook_id, idx, pos, event, coll_id, at, payload, status,
		attempt, next_ms, claimer, lease_ms, response_status, response_body, error, duration_ms, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, '', 0, 0, '', '', 0, ?, ?)`,
		id, webhook, idx, pos, event, collID, at, string(payload), at*1000, at, at)
	if err != nil {
		return "", err
	}
	if pos == 0 {
		tx.Emit(fsm.Event{Kind: evQueued})
	}
	return id, nil
}

// snapshot is a record as a delivery keeps it until it is sent: the
// stored values (sealed ones stay sealed) of its fields by name, never a
// private one (password hashes).
type snapshot struct {
	Coll    string         `json:"coll"`
	Name    string         `json:"name"`
	ID      string         `json:"id"`
	Created any            `json:"created"`
	Updated any            `json:"updated"`
	Fields  map[string]any `json:"fields"`
}

// recordPayload is the snapshot of w's record.
func recordPayload(w *engine.RecordWrite) ([]byte, error) {
	fields := w.Coll.RowFields()
	s := snapshot{Coll: w.Coll.ID, Name: w.Coll.Name, ID: engine.AsString(w.Row[0]), Created: w.Row[1], Updated: w.Row[2],
		Fields: make(map[string]any, len(fields))}
	for i, f := range fields {
		if !f.Private() {
			s.Fields[f.Name] = w.Row[3+i]
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: webhook payload: %v", fsm.ErrHalt, err)
	}
	return b, nil
}
