package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

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

var errEmailTaken = &Error{Kind: KindConflict, Message: "The email is already in use",
	Details: map[string]any{"email": "is already in use"}}

// SignInAnonymous creates a guest account in collection name and signs it
// in.
func (e *Engine) SignInAnonymous(ctx context.Context, name string) (*UserSession, uint64, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, 0, fmt.Errorf("engine: random: %w", err)
	}
	email := "anon_" + hex.EncodeToString(b[:]) + "@" + AnonymousDomain
	for attempt := 0; ; attempt++ {
		ci, err := e.authCollection(name)
		if err != nil {
			return nil, 0, err
		}
		if !e.authFeature(ci, "anonymous") {
			return nil, 0, errFeatureOff("Anonymous sign-in")
		}
		now := e.now().Unix()
		values := make([]any, len(ci.fields))
		for i, f := range ci.fields {
			switch {
			case f.system && f.Name == "email":
				values[i] = email
			case f.system && f.Name == "is_anonymous":
				values[i] = int64(1)

			case f.system && f.typ.Name() == schema.FieldBool:
				values[i] = int64(0)
			case f.system:
				values[i] = nil
			case f.Type == schema.FieldAutodate:
				if f.OnCreate || f.OnUpdate {
					values[i] = now
				}
			default:
				// The empty value of the type; required fields stay empty
				// until the guest is promoted or updates its record.
				values[i], _ = f.typ.Normalize(f.Field, nil)
			}
		}
		res, idx, err := e.propose(ctx, cmdRecordCreate, recordCreateCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: true, ID: NewID(), Now: now, Values: values,
		})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		s, err := e.issueUserSession(ci, res.(Row), 0, "")
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
	Env *ruleEnv `json:"env,omitempty"`
}

// Promote turns the caller, a guest of collection name, into a real
// account: body is {email, password, ...custom fields}. 409 when the
// email is taken, 422 for the password policy, other invalid fields, or a
// caller that is not anonymous per the database.
func (e *Engine) Promote(ctx context.Context, p Principal, name string, body []byte) (*UserSession, uint64, error) {
	in, err := decodeBody(body)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		ci, err := e.authCollection(name)
		if err != nil {
			return nil, 0, err
		}
		if !e.authFeature(ci, "anonymous") {
			return nil, 0, errFeatureOff("Anonymous sign-in")
		}
		row, err := e.ownUser(ctx, p, ci)
		if err != nil {
			return nil, 0, err
		}
		if !asBool(row[ci.rowIndex("is_anonymous")]) {
			return nil, 0, errAnonymousOnly
		}
		d := map[string]string{}
		for _, k := range []string{"email", "password"} {
			if s, _ := in[k].(string); strings.TrimSpace(s) == "" {
				d[k] = "cannot be blank"
			}
		}
		if len(d) > 0 {
			return nil, 0, ValidationError(d)
		}
		// Refuse before validating, as a record update does: a refusal
		// never reveals field names.
		if err := preWriteError(ci, ci.UpdateRule, false); err != nil {
			return nil, 0, err
		}
		now := e.now().Unix()
		values, verr := e.prepareUpdate(ci, in, false, now)
		if verr != nil {
			return nil, 0, verr
		}
		env := e.envFor(p, ci, bodyEnv(ci, in, func(i int) any { return values[ci.fields[i].Name] }), now)
		if other, err := e.userByEmail(ctx, ci, asString(values["email"])); err != nil || (other != nil && asString(other[0]) != p.ID) {
			return nil, 0, firstErr(err, errEmailTaken)
		}
		cmd := promoteCmd{Coll: ci.ID, Ver: ci.Version, ID: p.ID, Now: now, Values: values, JTI: p.TokenID, Env: env}
		if p.Claims != nil && p.Claims.ExpiresAt != nil {
			cmd.Exp = p.Claims.ExpiresAt.Unix()
		}
		res, idx, err := e.propose(ctx, cmdPromote, cmd)
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		s, err := e.issueUserSession(ci, res.(Row), 0, "")
		return s, idx, err
	}
}

func (e *Engine) applyPromote(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[promoteCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := e.loadCollForApply(tx, c.Coll, c.Ver)
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
	if !asBool(row[ci.rowIndex("is_anonymous")]) {
		return nil, errAnonymousOnly
	}
	if c.Env != nil {
		if err := e.writeRuleError(tx, ci, ci.UpdateRule, false, c.Env, c.ID); err != nil {
			return nil, err
		}
	}
	email := asString(c.Values["email"])
	var taken int
	if err := tx.QueryRow("SELECT count(*) FROM "+ci.table+" WHERE email = ? COLLATE NOCASE AND id <> ?", email, c.ID).Scan(&taken); err != nil {
		return nil, err
	}
	if taken > 0 {
		return nil, errEmailTaken
	}
	sets := []string{"is_anonymous = 0"}
	var args []any
	sets, args, err = e.valueSets(tx, ci, c.Values, sets, args)
	if err != nil {
		return nil, err
	}
	row, err = e.setUserColumns(tx, ci, c.ID, c.Now, sets, args)
	if err != nil {
		if isUniqueViolation(err) && strings.EqualFold(uniqueViolationColumn(err), "email") {
			return nil, errEmailTaken
		}
		return nil, uniqueError(ci, err)
	}
	if row == nil {
		return nil, errBadToken
	}
	if err := revokeTx(tx, c.JTI, c.Exp); err != nil {
		return nil, err
	}
	return Row(row), nil
}
