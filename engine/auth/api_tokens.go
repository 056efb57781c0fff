package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// API tokens (SPEC.md): `svcat_` + random, shown once, stored as a SHA-256
// hash (they are 160 random bits: a slow hash adds nothing), acting for
// the admin who minted them with no more power than that admin has now,
// narrowed by scopes read from the replicated table on every request.

// APITokenPrefix starts every API token.
const APITokenPrefix = "svcat_"

// API token lifetimes.
const (
	apiTokenDefaultTTL = 90 * 24 * time.Hour
	apiTokenMaxTTL     = 10 * 365 * 24 * time.Hour
)

// APIToken is a token's metadata (never the token).
type APIToken struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	AdminID   string   `json:"admin_id"`
	Created   int64    `json:"created"`
	ExpiresAt int64    `json:"expires_at"`
	hash      string
}

// MintedToken is the answer to minting: the only time the token is shown.
type MintedToken struct {
	ID        string `json:"id"`
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expires_at"`
}

type apiTokenSet struct {
	byHash map[string]*APIToken
	byID   map[string]*APIToken
}

type apiTokenCreateCmd struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Hash      string   `json:"hash"`
	Scopes    []string `json:"scopes"`
	AdminID   string   `json:"admin_id"`
	Created   int64    `json:"created"`
	ExpiresAt int64    `json:"expires_at"`
}

type apiTokenDeleteCmd struct {
	ID string `json:"id"`
}

// ValidScope reports whether s is a scope SPEC.md names: admin, read,
// write, mcp:read|write|admin|sql, collection:<name|*>:<read|write|*>.
func ValidScope(s string) bool {
	switch s {
	case "admin", "read", "write", "mcp:read", "mcp:write", "mcp:admin", "mcp:sql":
		return true
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[0] != "collection" || parts[1] == "" {
		return false
	}
	switch parts[2] {
	case "read", "write", "*":
		return true
	}
	return false
}

// MintAPIToken creates a token for the calling admin.
func (ad *Admins) MintAPIToken(ctx context.Context, caller engine.Principal, name string, scopes []string, ttlSeconds int64) (*MintedToken, uint64, error) {
	d := map[string]string{}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		d["name"] = "must be 1 to 100 characters"
	}
	if len(scopes) == 0 {
		d["scopes"] = "must name at least one scope"
	}
	for _, s := range scopes {
		if !ValidScope(s) {
			d["scopes"] = fmt.Sprintf("unknown scope %q", s)
			break
		}
	}
	ttl := apiTokenDefaultTTL
	if ttlSeconds != 0 {
		ttl = time.Duration(ttlSeconds) * time.Second
		if ttlSeconds < 0 || ttl > apiTokenMaxTTL {
			d["ttl_seconds"] = "must be between 1 second and 10 years"
		}
	}
	if len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	if !caller.IsAdmin() || caller.Scopes != nil {
		return nil, 0, &engine.Error{Kind: engine.KindForbidden, Message: "Only an admin signed in with a password can mint API tokens"}
	}
	raw := make([]byte, 20)
	if _, err := rand.Read(raw); err != nil {
		return nil, 0, err
	}
	tok := APITokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
	now := ad.au.core.Now()
	cmd := apiTokenCreateCmd{ID: "tok_" + engine.NewID(), Name: name, Hash: hashAPIToken(tok), Scopes: scopes,
		AdminID: caller.ID, Created: now.Unix(), ExpiresAt: now.Add(ttl).Unix()}
	_, idx, err := ad.au.core.Propose(ctx, cmdAPITokenCreate, cmd)
	if err != nil {
		return nil, idx, err
	}
	return &MintedToken{ID: cmd.ID, Token: tok, ExpiresAt: cmd.ExpiresAt}, idx, nil
}

func hashAPIToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// APITokens lists the tokens' metadata, newest first.
func (ad *Admins) APITokens() []*APIToken {
	set := ad.au.tokens.Load()
	out := make([]*APIToken, 0, len(set.byID))
	for _, t := range set.byID {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *APIToken) int {
		return cmp.Or(cmp.Compare(b.Created, a.Created), strings.Compare(a.ID, b.ID))
	})
	return out
}

// DeleteAPIToken revokes a token.
func (ad *Admins) DeleteAPIToken(ctx context.Context, id string) (uint64, error) {
	if ad.au.tokens.Load().byID[id] == nil {
		return 0, &engine.Error{Kind: engine.KindNotFound, Message: "API token not found"}
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAPITokenDelete, apiTokenDeleteCmd{ID: id})
	return idx, err
}

func (ad *Admins) applyAPITokenCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[apiTokenCreateCmd](cmd)
	if err != nil {
		return nil, err
	}
	scopes, _ := json.Marshal(c.Scopes)
	_, err = tx.Exec(`INSERT INTO _svc_api_tokens (id, name, hash, scopes, admin_id, created, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, c.Hash, string(scopes), c.AdminID, c.Created, c.ExpiresAt)
	if err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAPITokens, Subject: c.ID})
	return nil, nil
}

func (ad *Admins) applyAPITokenDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[apiTokenDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_api_tokens WHERE id = ?`, c.ID); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAPITokens, Subject: c.ID})
	return nil, nil
}

func (ad *Admins) reloadAPITokens(ctx context.Context) error {
	set := &apiTokenSet{byHash: map[string]*APIToken{}, byID: map[string]*APIToken{}}
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT id, name, hash, scopes, admin_id, created, expires_at FROM _svc_api_tokens`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t := &APIToken{}
			var scopes string
			if err := rows.Scan(&t.ID, &t.Name, &t.hash, &scopes, &t.AdminID, &t.Created, &t.ExpiresAt); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
				return err
			}
			set.byHash[t.hash], set.byID[t.ID] = t, t
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("engine: load API tokens: %w", err)
	}
	ad.au.tokens.Store(set)
	return nil
}
