package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Anonymous accounts (SPEC.md, Authentication 9 and the state table). A
// guest is a real record with is_anonymous=1, no password and a synthetic
// email anon_<hex>@anonymous.invalid (RFC 2606 reserves .invalid), signed
// in with a 30-day token carrying anonymous: true. It is created through
// the ordinary record-create command as the system (the collection's
// create rule does not apply: the feature switch is the rule). Promote
// turns the guest into a real account in place: same id, email and
// password set, is_anonymous cleared, decided against the database when
// the command is applied; the guest token is revoked and a fresh session
// is minted.

// AnonymousDomain is the domain of guests' synthetic emails.
const AnonymousDomain = "anonymous.invalid"

var errEmailTaken = &engine.Error{Kind: engine.KindConflict, Message: "The email is already in use",
	Details: map[string]any{"email": "is already in use"}}

// SignInAnonymous creates a guest account in collection name and signs it
// in.
func (au *Auth) SignInAnonymous(ctx context.Context, name string) (*UserSession, uint64, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, 0, fmt.Errorf("engine: random: %w", err)
	}
	email := "anon_" + hex.EncodeToString(b[:]) + "@" + AnonymousDomain
	for attempt := 0; ; attempt++ {
		ci, err := au.authCollection(name)
		if err != nil {
			return nil, 0, err
		}
		if !au.authFeature(ci, "anonymous") {
			return nil, 0, errFeatureOff("Anonymous sign-in")
		}
		now := au.core.Now().Unix()
		fields := ci.RowFields()
		values := make([]any, len(fields))
		for i, f := range fields {
			switch {
			case f.System() && f.Name == "email":
				values[i] = email
			case f.System() && f.Name == "is_anonymous":
				values[i] = int64(1)
			case f.System() && f.Type == schema.FieldBool:
				values[i] = int64(0)
			case f.System():
				values[i] = nil
			case f.Type == schema.FieldAutodate:
				if f.OnCreate || f.OnUpdate {
					values[i] = now
				}
			default:
				// The empty value of the type; required fields stay empty
				// until the guest is promoted or updates its record.
				values[i] = f.EmptyValue()
			}
		}
		row, idx, err := au.core.Records().CreateAccount(ctx, ci, engine.NewID(), now, values)
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		s, err := au.issueUserSession(ci, row, 0, "")
		return s, idx, err
	}
}

type promoteCmd struct {
	Coll   string         `json:"coll"`
	Ver    int64          `json:"ver"`
	ID     string         `json:"id"`
	Now    int64          `json:"now"`
	Values map[string]any `json:"values"`
	// The guest token, revoked with the change.
	JTI string `json:"jti"`
	Exp int64  `json:"exp"`
	// Env is the guest's request as the collection's update rule sees it
	// (@request.body holds the sent fields): a promote is an update of
	// the guest's own record by the guest. Commands proposed before this
	// rule existed carry none and replay without the check.
	Env *engine.RuleEnv `json:"env,omitempty"`
}

// Promote turns the caller, a guest of collection name, into a real
// account: body is {email, password, ...custom fields}. 409 when the
// email is taken, 422 for the password policy, other invalid fields, or a
// caller that is not anonymous per the database.
func (au *Auth) Promote(ctx context.Context, p engine.Principal, name string, body []byte) (*UserSession, uint64, error) {
	in, err := engine.DecodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := au.authCollection(name)
		if err != nil {
			return nil, 0, err
		}
		if !au.authFeature(ci, "anonymous") {
			return nil, 0, errFeatureOff("Anonymous sign-in")
		}
		row, err := au.ownUser(ctx, p, ci)
		if err != nil {
			return nil, 0, err
		}
		if !asBool(row[ci.RowIndex("is_anonymous")]) {
			return nil, 0, errAnonymousOnly
		}
		d := map[string]string{}
		for _, k := range []string{"email", "password"} {
			if s, _ := in[k].(string); strings.TrimSpace(s) == "" {
				d[k] = "cannot be blank"
			}
		}
		if len(d) > 0 {
			return nil, 0, engine.ValidationError(d)
		}
		// Refuse before validating, as a record update does: a refusal
		// never reveals field names.
		if err := engine.PreWriteError(ci, ci.UpdateRule, false); err != nil {
			return nil, 0, err
		}
		now := au.core.Now().Unix()
		values, verr := au.core.Records().PrepareUpdate(ci, in, false, now)
		if verr != nil {
			return nil, 0, verr
		}
		env := au.core.Records().UpdateEnv(p, ci, in, values, now)
		if other, err := au.userByEmail(ctx, ci, engine.AsString(values["email"])); err != nil || (other != nil && engine.AsString(other[0]) != p.ID) {
			return nil, 0, engine.FirstErr(err, errEmailTaken)
		}
		cmd := promoteCmd{Coll: ci.ID, Ver: ci.Version, ID: p.ID, Now: now, Values: values, JTI: p.TokenID, Env: env}
		if p.Claims != nil && p.Claims.ExpiresAt != nil {
			cmd.Exp = p.Claims.ExpiresAt.Unix()
		}
		res, idx, err := au.core.Propose(ctx, cmdPromote, cmd)
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		s, err := au.issueUserSession(ci, res.(engine.Row), 0, "")
		return s, idx, err
	}
}

func (au *Auth) applyPromote(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[promoteCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	row, err := userRowTx(tx, ci, c.ID)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, errBadToken
	}
	if !asBool(row[ci.RowIndex("is_anonymous")]) {
		return nil, errAnonymousOnly
	}
	if c.Env != nil {
		if err := au.core.Records().WriteRuleError(tx, ci, ci.UpdateRule, false, c.Env, c.ID); err != nil {
			return nil, err
		}
	}
	email := engine.AsString(c.Values["email"])
	var taken int
	if err := tx.QueryRow("SELECT count(*) FROM "+ci.Table()+" WHERE email = ? COLLATE NOCASE AND id <> ?", email, c.ID).Scan(&taken); err != nil {
		return nil, err
	}
	if taken > 0 {
		return nil, errEmailTaken
	}
	sets := []string{"is_anonymous = 0"}
	var args []any
	sets, args, err = au.core.Records().ValueSets(tx, ci, c.Values, sets, args)
	if err != nil {
		return nil, err
	}
	row, err = au.setUserColumns(tx, ci, c.ID, c.Now, sets, args)
	if err != nil {
		if engine.IsUniqueViolation(err) && strings.EqualFold(engine.UniqueViolationColumn(err), "email") {
			return nil, errEmailTaken
		}
		return nil, engine.UniqueError(ci, err)
	}
	if row == nil {
		return nil, errBadToken
	}
	if err := revokeTx(tx, c.JTI, c.Exp); err != nil {
		return nil, err
	}
	return engine.Row(row), nil
}
