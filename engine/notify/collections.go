package notify

import (
	"context"
	"encoding/json"
	"fmt"

	"svcd/engine"
	"svcd/engine/schema"
)

// The notification collections (SPEC.md): their names are their tables'.
// The svc_ prefix is reserved, so no admin collection takes them, and the
// notifications path segment stays free for the device routes.
const (
	// InboxCollection holds the notifications: user, type, title, body,
	// data, read_at. A user reads (and may mark read, or delete) their
	// own; only admins and server-side code create them.
	InboxCollection = "svc_notifications"
	// DevicesCollection holds the device tokens users register: user,
	// provider, token (unique), platform, app_version, enabled, last_seen.
	// A user reads their own; they change through the device routes.
	DevicesCollection = "svc_device_tokens"
)

// Limits of what the collections hold (docs/notifications.md).
const (
	MaxTokenChars      = 4096
	MaxAppVersionChars = 100
	MaxTitleChars      = 1000
	MaxBodyChars       = 4000
	MaxDataBytes       = 4096
	maxTypeChars       = 100
)

// Bootstrapped reports whether notifications are set up on this replica:
// the device collection exists (a provider has been enabled).
func (n *Notifications) Bootstrapped() bool { return n.core.Coll(DevicesCollection) != nil }

// ensure creates the collections of names that do not exist yet, through
// the log, with an index on their user field; it answers the largest log
// index it wrote (0: nothing to do). Two nodes creating one at once are
// both fine: the second sees the first's.
func (n *Notifications) ensure(ctx context.Context, names ...string) (uint64, error) {
	var last uint64
	for _, name := range names {
		if n.core.Coll(name) != nil {
			continue
		}
		users, err := n.users()
		if err != nil {
			return last, err
		}
		def, _ := json.Marshal(definition(name, users.ID))
		_, idx, err := n.core.Schema().CreateSystemCollection(ctx, def)
		if err != nil {
			if n.core.Coll(name) != nil {
				continue // created meanwhile
			}
			return last, fmt.Errorf("create %s: %w", name, err)
		}
		last = max(last, idx)
		if _, idx, err := n.core.Schema().CreateIndex(ctx, name, "user", false); err != nil {
			n.log.Warn("notifications: no index on the user field", "collection", name, "err", err)
		} else {
			last = max(last, idx)
		}
	}
	return last, nil
}

// users is the auth collection the notification collections relate to.
func (n *Notifications) users() (*engine.Coll, error) {
	name := n.usersCollection()
	ci := n.core.Coll(name)
	if ci == nil || ci.Type != schema.TypeAuth {
		return nil, engine.ValidationError(map[string]string{settingUsers: fmt.Sprintf(
			"the notification collections belong to the users of the auth collection %q, which does not exist: create it, or name yours in this setting", name)})
	}
	return ci, nil
}

// definition is the JSON of collection name, its user relation aimed at
// the auth collection usersID.
func definition(name, usersID string) map[string]any {
	user := map[string]any{"name": "user", "type": "relation", "collection": usersID, "required": true, "cascade": true}
	own := "user = @request.auth.id"
	switch name {
	case InboxCollection:
		// Users may change read_at alone on their own notifications.
		markRead := own
		for _, f := range []string{"user", "type", "title", "body", "data"} {
			markRead += " && @request.body." + f + ":isset = false"
		}
		return map[string]any{"name": name, "type": "base", "fields": []map[string]any{
			user,
			{"name": "type", "type": "text", "max": maxTypeChars},
			{"name": "title", "type": "text", "max": MaxTitleChars},
			{"name": "body", "type": "text", "max": MaxBodyChars},
			{"name": "data", "type": "json", "max_size": MaxDataBytes},
			{"name": "read_at", "type": "date"},
		}, "view_rule": own, "create_rule": nil, "update_rule": markRead, "delete_rule": own}
	default:
		return map[string]any{"name": name, "type": "base", "fields": []map[string]any{
			user,
			{"name": "provider", "type": "select", "values": []string{FCM, APNs}, "required": true},
			{"name": "token", "type": "text", "required": true, "unique": true, "min": 1, "max": MaxTokenChars},
			{"name": "platform", "type": "select", "values": []string{"ios", "android", "web"}, "required": true},
			{"name": "app_version", "type": "text", "max": MaxAppVersionChars},
			{"name": "enabled", "type": "bool"},
			{"name": "last_seen", "type": "date"},
		}, "view_rule": own, "create_rule": nil, "update_rule": nil, "delete_rule": nil}
	}
}

// devicesUsers is the auth collection the device collection's user
// relation targets (nil when it has none any more).
func devicesUsers(ci *engine.Coll) string {
	if f := ci.Field("user"); f != nil && f.Type == schema.FieldRelation {
		return f.Collection
	}
	return ""
}
