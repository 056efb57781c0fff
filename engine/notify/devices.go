package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"svcd/engine"
	"svcd/fsm"
)

// Device is a device registration as a user sends it (SPEC.md: POST
// /notifications/devices).
type Device struct {
	Token      string `json:"token"`
	Provider   string `json:"provider"`
	Platform   string `json:"platform"`
	AppVersion string `json:"app_version"`
}

// platforms a device may name.
var platforms = map[string]bool{"ios": true, "android": true, "web": true}

// parseDevice reads and checks a registration body.
func parseDevice(body []byte) (*Device, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil || in == nil {
		return nil, engine.Errorf(engine.KindBadRequest, "The body must be a JSON object: {token, provider, platform, app_version?}")
	}
	var d Device
	bad := map[string]string{}
	for k, raw := range in {
		var dst *string
		switch k {
		case "token":
			dst = &d.Token
		case "provider":
			dst = &d.Provider
		case "platform":
			dst = &d.Platform
		case "app_version":
			dst = &d.AppVersion
		default:
			bad[k] = "unknown member: a device is {token, provider, platform, app_version?}"
			continue
		}
		if string(raw) != "null" && json.Unmarshal(raw, dst) != nil {
			bad[k] = "must be a string"
		}
	}
	switch n := utf8.RuneCountInString(d.Token); {
	case bad["token"] != "":
	case n == 0:
		bad["token"] = "is required"
	case n > MaxTokenChars:
		bad["token"] = "must be at most 4096 characters"
	case strings.ContainsAny(d.Token, " \t\r\n/"):
		bad["token"] = "must not contain spaces or slashes"
	}
	switch {
	case bad["provider"] != "":
	case d.Provider == FCM || d.Provider == APNs:
	case d.Provider == HostedPush:
		bad["provider"] = "hostedpush keeps its devices itself (its SDK registers them): register fcm or apns tokens here"
	case d.Provider == "":
		bad["provider"] = "is required: fcm or apns"
	default:
		bad["provider"] = "must be fcm or apns"
	}
	switch {
	case bad["platform"] != "":
	case d.Platform == "":
		bad["platform"] = "is required: ios, android or web"
	case !platforms[d.Platform]:
		bad["platform"] = "must be ios, android or web"
	}
	if bad["app_version"] == "" && utf8.RuneCountInString(d.AppVersion) > MaxAppVersionChars {
		bad["app_version"] = "must be at most 100 characters"
	}
	if len(bad) > 0 {
		return nil, engine.ValidationError(bad)
	}
	return &d, nil
}

// deviceColl is the device collection for a write by p: 503 before the
// collections exist, 403 for a caller who is not one of its users.
func (n *Notifications) deviceColl(p engine.Principal) (*engine.Coll, error) {
	if p.Kind == engine.Anonymous {
		return nil, engine.Errorf(engine.KindUnauthorized, "Authentication required")
	}
	ci := n.core.Coll(DevicesCollection)
	if ci == nil {
		return nil, errNotBootstrapped
	}
	if p.Kind != engine.User {
		return nil, errNotAUser
	}
	target := devicesUsers(ci)
	if uc := n.core.Coll(p.Collection); uc == nil || uc.ID != target {
		name := target
		if tc := n.core.Coll(target); tc != nil {
			name = tc.Name
		}
		return nil, engine.Errorf(engine.KindForbidden, "Devices are registered by users of the %s collection", name)
	}
	return ci, nil
}

type registerCmd struct {
	Coll       string              `json:"coll"`
	Ver        int64               `json:"ver"`
	User       string              `json:"user"`
	Token      string              `json:"token"`
	Provider   string              `json:"provider"`
	Platform   string              `json:"platform"`
	AppVersion string              `json:"app_version"`
	Now        int64               `json:"now"`
	Actor      *engine.Actor       `json:"actor,omitempty"`
	Create     engine.RecordCreate `json:"create"` // the record, when the token is new
}

// RegisterDevice registers body's device token for p: a new token is
// created (created reports it), a known one is rebound to p and enabled
// again, whoever held it. It answers the device record as p sees it.
func (n *Notifications) RegisterDevice(ctx context.Context, p engine.Principal, body []byte) (rec *engine.Record, created bool, idx uint64, err error) {
	d, err := parseDevice(body)
	if err != nil {
		if _, cerr := n.deviceColl(p); cerr != nil {
			return nil, false, 0, cerr // 401, 403 and 503 come first
		}
		return nil, false, 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := n.deviceColl(p)
		if err != nil {
			return nil, false, 0, err
		}
		now := n.core.Now().Unix()
		create, verr := n.core.Records().AdminCreates(p, ci, now).Prepare(map[string]any{
			"user": p.ID, "provider": d.Provider, "token": d.Token, "platform": d.Platform,
			"app_version": d.AppVersion, "enabled": true, "last_seen": now,
		})
		if verr != nil {
			return nil, false, 0, verr
		}
		v, idx, err := n.core.Propose(ctx, cmdRegister, registerCmd{Coll: ci.ID, Ver: ci.Version, User: p.ID, Token: d.Token,
			Provider: d.Provider, Platform: d.Platform, AppVersion: d.AppVersion, Now: now, Actor: engine.ActorOf(p), Create: create})
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, false, idx, err
		}
		r := v.(*registered)
		rec, err := n.core.Records().GetRecord(ctx, system(), DevicesCollection, r.ID, "", "")
		return rec, r.Created, idx, err
	}
}

func (n *Notifications) applyRegister(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[registerCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := n.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	var id string
	err = tx.QueryRow(`SELECT id FROM `+ci.Table()+` WHERE token = ?`, c.Token).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := n.core.Records().ApplyRecordCreateRow(tx, ci, &c.Create); err != nil {
			return nil, err
		}
		return &registered{ID: c.Create.ID(), Created: true}, nil
	case err != nil:
		return nil, err
	}
	row, err := ci.ScanRow(tx.QueryRow(`UPDATE `+ci.Table()+` SET "user" = ?, provider = ?, platform = ?, app_version = ?,
		enabled = 1, last_seen = ?, updated = max(?, updated + 1) WHERE id = ? RETURNING `+ci.SelectCols(),
		c.User, c.Provider, c.Platform, c.AppVersion, c.Now, c.Now, id).Scan)
	if err != nil {
		return nil, err
	}
	if err := n.core.RecordWritten(tx, engine.EvRecordUpdate, ci, row, c.Now, c.Actor); err != nil {
		return nil, err
	}
	return &registered{ID: id}, nil
}

type unregisterCmd struct {
	Coll  string        `json:"coll"`
	Ver   int64         `json:"ver"`
	User  string        `json:"user"`
	Token string        `json:"token"`
	Now   int64         `json:"now"`
	Actor *engine.Actor `json:"actor,omitempty"`
}

// UnregisterDevice disables p's device token (enabled = 0, the record
// kept): 404 when p holds no device with that token, whoever else does.
// Disabling a disabled token changes nothing and succeeds.
func (n *Notifications) UnregisterDevice(ctx context.Context, p engine.Principal, token string) (uint64, error) {
	for attempt := 0; ; attempt++ {
		ci, err := n.deviceColl(p)
		if err != nil {
			return 0, err
		}
		_, idx, err := n.core.Propose(ctx, cmdUnregister, unregisterCmd{Coll: ci.ID, Ver: ci.Version, User: p.ID, Token: token,
			Now: n.core.Now().Unix(), Actor: engine.ActorOf(p)})
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		return idx, err
	}
}

func (n *Notifications) applyUnregister(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[unregisterCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := n.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	var (
		id      string
		enabled bool
	)
	err = tx.QueryRow(`SELECT id, coalesce(enabled, 0) FROM `+ci.Table()+` WHERE token = ? AND "user" = ?`, c.Token, c.User).Scan(&id, &enabled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, errDeviceNotFound
	case err != nil:
		return nil, err
	case !enabled:
		return nil, nil
	}
	return nil, n.disableRow(tx, ci, id, c.Now, c.Actor)
}

// disableRow sets enabled = 0 on device id and passes the change through
// the record-write funnel.
func (n *Notifications) disableRow(tx *fsm.Tx, ci *engine.Coll, id string, now int64, actor *engine.Actor) error {
	row, err := ci.ScanRow(tx.QueryRow(`UPDATE `+ci.Table()+` SET enabled = 0, updated = max(?, updated + 1)
		WHERE id = ? RETURNING `+ci.SelectCols(), now, id).Scan)
	if err != nil {
		return err
	}
	return n.core.RecordWritten(tx, engine.EvRecordUpdate, ci, row, now, actor)
}
