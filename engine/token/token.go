// Package token owns the service's JSON Web Tokens: HS256 signing with the
// node-shared key, the claims of SPEC.md, and verification of signature,
// issuer, audience and expiry. Revocation and account checks are the
// caller's: they need the database.
package token

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the iss claim of every token.
const Issuer = "svc"

// Audiences.
const (
	AudUser  = "user"
	AudAdmin = "admin"
	AudAPI   = "api"
	AudFile  = "file"
)

// Claims are the claims of SPEC.md's tokens.
type Claims struct {
	ID             string `json:"id"`
	Email          string `json:"email,omitempty"`
	Collection     string `json:"collection,omitempty"`
	Anonymous      bool   `json:"anonymous,omitempty"`
	ImpersonatedBy string `json:"impersonated_by,omitempty"`
	// AuthTime is when the session was first established (refresh keeps it).
	AuthTime int64 `json:"auth_time,omitempty"`
	// File tokens (audience file) only: the stored name of the one file
	// the token opens, the client address it is bound to (bindTokenIp),
	// whether its subject is an admin, and the API token it was minted
	// with (its subject is then that token's admin).
	File     string `json:"file,omitempty"`
	IP       string `json:"ip,omitempty"`
	Admin    bool   `json:"admin,omitempty"`
	APIToken string `json:"api_token,omitempty"`
	// NewEmail is the address an email change token (audience
	// email_change) moves the account to (PocketBase names it newEmail).
	NewEmail string `json:"newEmail,omitempty"`
	// Type and CollectionID are the claims PocketBase's clients read
	// from a token's payload (PocketBase names them type and
	// collectionId): session tokens carry type "auth", and every token
	// naming a collection carries its id (admins: SuperusersCollectionID).
	// Issue fills them; nothing on the server decides on them.
	Type         string `json:"type,omitempty"`
	CollectionID string `json:"collectionId,omitempty"`
	jwt.RegisteredClaims
}

// TypeAuth is the type claim of session tokens (audiences user and admin).
const TypeAuth = "auth"

// AdminsCollection is the collection claim of admin tokens.
const AdminsCollection = "_admins"

// SuperusersCollectionID is the collectionId claim of admin tokens: the id
// of PocketBase's _superusers collection, which PocketBase's JavaScript
// SDK takes as the mark of a superuser session (BaseAuthStore.isSuperuser).
const SuperusersCollectionID = "pbc_3142635823"

// fillCompatClaims sets Type and CollectionID when the caller left them
// empty: type "auth" for session audiences, the collection's id (admins:
// SuperusersCollectionID) as collectionId.
func (c *Claims) fillCompatClaims(aud string) {
	if c.Type == "" && (aud == AudUser || aud == AudAdmin) {
		c.Type = TypeAuth
	}
	if c.CollectionID == "" {
		switch c.Collection {
		case "":
		case AdminsCollection:
			c.CollectionID = SuperusersCollectionID
		default:
			c.CollectionID = c.Collection
		}
	}
}

// ClockLeeway is how far the clocks of two nodes may disagree before a
// token issued by one is refused by the other (its iat would lie in the
// verifier's future); it also extends expiries by as much.
const ClockLeeway = 30 * time.Second

// Signer issues and verifies tokens with one HS256 key.
type Signer struct {
	key    []byte
	parser *jwt.Parser
}

// Option configures a Signer.
type Option func(*options)

type options struct {
	now func() time.Time
}

// WithClock makes Verify judge expiry and issue times against now instead
// of time.Now: the node's clock, the one its tokens are issued with (a
// test's fake clock, the fault build's skewed one). nil keeps time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// NewSigner returns a signer for key (at least 32 bytes).
func NewSigner(key []byte, opts ...Option) (*Signer, error) {
	if len(key) < 32 {
		return nil, errors.New("token: signing key must be at least 32 bytes")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	popts := []jwt.ParserOption{jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(Issuer), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithStrictDecoding(), jwt.WithLeeway(ClockLeeway)}
	if o.now != nil {
		popts = append(popts, jwt.WithTimeFunc(o.now))
	}
	return &Signer{key: append([]byte(nil), key...), parser: jwt.NewParser(popts...)}, nil
}

// Issue signs c for audience aud, valid for ttl from now. It fills iss, aud,
// iat, exp and a fresh jti (and type and collectionId, see Claims), and returns the token and its jti.
func (s *Signer) Issue(c Claims, aud string, now time.Time, ttl time.Duration) (string, string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", "", fmt.Errorf("token: jti: %w", err)
	}
	c.fillCompatClaims(aud)
	c.Issuer = Issuer
	c.Audience = jwt.ClaimStrings{aud}
	c.IssuedAt = jwt.NewNumericDate(now)
	c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	c.RegisteredClaims.ID = hex.EncodeToString(jti)
	if c.AuthTime == 0 {
		c.AuthTime = now.Unix()
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
	return tok, c.RegisteredClaims.ID, err
}

// ErrInvalid is returned for any token that fails verification.
var ErrInvalid = errors.New("token: invalid")

// Verify checks signature, issuer, expiry and that aud is among the token's
// audiences, and returns its claims.
func (s *Signer) Verify(raw, aud string) (*Claims, error) {
	c, _, err := s.VerifyAny(raw, aud)
	return c, err
}

// VerifyAny is Verify accepting any of auds; it returns the claims and
// the audience that matched (the first of auds the token carries).
func (s *Signer) VerifyAny(raw string, auds ...string) (*Claims, string, error) {
	var c Claims
	t, err := s.parser.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return s.key, nil })
	if err != nil || !t.Valid {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if c.ID == "" {
		return nil, "", fmt.Errorf("%w: no subject id", ErrInvalid)
	}
	for _, a := range auds {
		if hasAudience(c.Audience, a) {
			return &c, a, nil
		}
	}
	return nil, "", fmt.Errorf("%w: wrong audience", ErrInvalid)
}

func hasAudience(auds jwt.ClaimStrings, aud string) bool {
	for _, a := range auds {
		if a == aud {
			return true
		}
	}
	return false
}
