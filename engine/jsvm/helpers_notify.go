package jsvm

import (
	"encoding/json"
	"strings"

	"github.com/dop251/goja"

	"svcd/engine"
	"svcd/engine/schema"
)

// helpers.notify(userId, {title, body, data}, {inbox, push, providers,
// collection}) writes an inbox row for the user (SPEC.md), unless inbox
// is false, and answers {inboxRowId, enqueued}.
//
// The inbox is the collection notifications (SPEC.md's fields: user, a
// relation to the user's auth collection that cascades, type, title,
// body, data, read_at; users read, mark and delete their own rows; only
// admins and code create them), created on the first notify. Its user
// relation targets one auth collection: users unless the first notify
// names another (collection). Rows are written as the system.
//
// Push delivery comes with the notifications module: until then a notify
// that would push (a push provider enabled in the settings, or named in
// providers) throws, before anything is written, unless push is false.
// With no provider enabled nothing is pushed and enqueued is empty.

// inboxName is the inbox collection's name (reserved: only the service
// creates it).
const inboxName = "notifications"

// pushProviders are the providers whose enabled setting a notify reads.
var pushProviders = []string{"fcm", "apns", "hostedpush"}

func (h *helperSet) inbox(o *goja.Object) {
	set(o, "notify", h.notify)
}

func (h *helperSet) notify(call goja.FunctionCall) goja.Value {
	user := h.str(call, 0, "helpers.notify", "the user's id")
	msg, err := h.inv.b.toObject(call.Argument(1), "the message")
	if err != nil || msg == nil {
		h.inv.fail("helpers.notify: the message must be an object {title, body, data}")
	}
	o := h.opts(call, 2, "helpers.notify")
	if optBool(o, "push", true) {
		if p := h.pushWanted(o); p != "" {
			h.inv.fail("helpers.notify: push delivery (%s) is not supported until the notifications module lands; pass {push: false} to write the inbox row only", p)
		}
	}
	out := map[string]any{"inboxRowId": nil, "enqueued": []any{}}
	if !optBool(o, "inbox", true) {
		return h.inv.b.fromGo(out)
	}
	if err := h.ensureInbox(optString(o, "collection")); err != nil {
		h.inv.throw("helpers.notify", err)
	}
	typ := ""
	if d, ok := msg["data"].(map[string]any); ok {
		typ, _ = d["type"].(string)
	}
	row := map[string]any{"user": user, "type": typ, "title": optString(msg, "title"), "body": optString(msg, "body"), "data": msg["data"]}
	body, _ := json.Marshal(row)
	rec, _, err := h.inv.m.core.Records().CreateRecord(h.inv.ctx, engine.SystemPrincipal(h.inv.id), inboxName, body)
	if err != nil {
		h.inv.throw("helpers.notify", err)
	}
	out["inboxRowId"] = recordID(rec)
	return h.inv.b.fromGo(out)
}

// pushWanted names a provider a notify would push through ("": none).
func (h *helperSet) pushWanted(o map[string]any) string {
	if ps, ok := o["providers"].([]any); ok && len(ps) > 0 {
		if s, ok := ps[0].(string); ok {
			return s
		}
		return "providers"
	}
	for _, p := range pushProviders {
		if h.inv.m.core.SettingBool("notifications.providers." + p + ".enabled") {
			return p
		}
	}
	return ""
}

// ensureInbox creates the inbox collection when it does not exist, its
// user relation to auth collection coll ("" : users, else the only auth
// collection).
func (h *helperSet) ensureInbox(coll string) error {
	if h.inv.m.core.Coll(inboxName) != nil {
		return nil
	}
	target, err := h.inboxTarget(coll)
	if err != nil {
		return err
	}
	owner := "user = @request.auth.id"
	def := map[string]any{
		"name": inboxName, "type": "base",
		"fields": []map[string]any{
			{"name": "user", "type": "relation", "collection": target, "cascade": true, "required": true},
			{"name": "type", "type": "text"},
			{"name": "title", "type": "text"},
			{"name": "body", "type": "text"},
			{"name": "data", "type": "json"},
			{"name": "read_at", "type": "date"},
		},
		"view_rule": owner, "create_rule": nil, "update_rule": owner, "delete_rule": owner,
	}
	body, _ := json.Marshal(def)
	_, _, err = h.inv.m.core.Schema().CreateSystemCollection(h.inv.ctx, body)
	if err != nil && h.inv.m.core.Coll(inboxName) != nil {
		return nil // another notify created it first
	}
	return err
}

// inboxTarget is the auth collection the inbox's user relation targets.
func (h *helperSet) inboxTarget(coll string) (string, error) {
	if coll != "" {
		ci := h.inv.m.core.Coll(coll)
		if ci == nil || ci.Type != schema.TypeAuth {
			return "", engine.FieldError("collection", "must name an auth collection")
		}
		return ci.Name, nil
	}
	if ci := h.inv.m.core.Coll("users"); ci != nil && ci.Type == schema.TypeAuth {
		return ci.Name, nil
	}
	var auths []string
	for _, c := range h.inv.m.core.Schema().Collections() {
		if c.Type == schema.TypeAuth {
			auths = append(auths, c.Name)
		}
	}
	switch len(auths) {
	case 0:
		return "", engine.Errorf(engine.KindValidation, "The inbox needs an auth collection for its users, and there is none")
	case 1:
		return auths[0], nil
	}
	return "", engine.FieldError("collection", "name the auth collection of the inbox's users ("+strings.Join(auths, ", ")+")")
}
