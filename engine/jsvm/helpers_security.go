package jsvm

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"math/big"
	"time"

	"github.com/dop251/goja"
	"github.com/golang-jwt/jwt/v5"

	"svcd/engine/password"
)

// helpers.security: random strings, digests, HMACs, constant-time
// comparison, HS256 JSON Web Tokens and argon2id password hashes.

// alnum is randomString's default alphabet.
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// maxRandom bounds randomString's length.
const maxRandom = 4096

func (h *helperSet) crypto(o *goja.Object) {
	rt := h.inv.rt
	ns := h.namespace(o, "security")
	ns.set("randomString", func(call goja.FunctionCall) goja.Value {
		n := int(call.Argument(0).ToInteger())
		if n < 1 || n > maxRandom {
			h.inv.fail("helpers.security.randomString: the length must be 1 to %d", maxRandom)
		}
		alphabet := []rune(h.optStr(call, 1, alnum))
		if len(alphabet) < 2 {
			h.inv.fail("helpers.security.randomString: the alphabet needs two characters or more")
		}
		out := make([]rune, n)
		for i := range out {
			k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
			out[i] = alphabet[k.Int64()]
		}
		return rt.ToValue(string(out))
	})
	ns.set("hash", func(call goja.FunctionCall) goja.Value {
		alg := h.str(call, 0, "helpers.security.hash", "the algorithm")
		hh := h.hasher("helpers.security.hash", alg)()
		hh.Write([]byte(h.str(call, 1, "helpers.security.hash", "the data")))
		return rt.ToValue(hex.EncodeToString(hh.Sum(nil)))
	})
	ns.set("hmac", func(call goja.FunctionCall) goja.Value {
		alg := h.str(call, 0, "helpers.security.hmac", "the algorithm")
		key := h.str(call, 1, "helpers.security.hmac", "the key")
		mac := hmac.New(h.hasher("helpers.security.hmac", alg), []byte(key))
		mac.Write([]byte(h.str(call, 2, "helpers.security.hmac", "the data")))
		return rt.ToValue(hex.EncodeToString(mac.Sum(nil)))
	})
	ns.set("equal", func(call goja.FunctionCall) goja.Value {
		a, b := h.optStr(call, 0, ""), h.optStr(call, 1, "")
		return rt.ToValue(subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1)
	})
	ns.set("jwtSign", h.jwtSign)
	ns.set("jwtVerify", h.jwtVerify)
	ns.set("hashPassword", func(call goja.FunctionCall) goja.Value {
		hs, err := password.Hash(h.str(call, 0, "helpers.security.hashPassword", "the password"), h.inv.m.core.PasswordParams())
		if err != nil {
			h.inv.throw("helpers.security.hashPassword", err)
		}
		return rt.ToValue(hs)
	})
	ns.set("verifyPassword", func(call goja.FunctionCall) goja.Value {
		// An account's hash may still be PocketBase's bcrypt (imported,
		// not yet signed in): verified like the sign-in verifies it.
		ok, _, err := password.VerifyAny(h.str(call, 0, "helpers.security.verifyPassword", "the password"),
			h.str(call, 1, "helpers.security.verifyPassword", "the hash"))
		return rt.ToValue(err == nil && ok)
	})
}

// hasher is the hash named alg: sha256, sha512, sha1 or md5.
func (h *helperSet) hasher(name, alg string) func() hash.Hash {
	switch alg {
	case "sha256":
		return sha256.New
	case "sha512":
		return sha512.New
	case "sha1":
		return sha1.New
	case "md5":
		return md5.New
	}
	h.inv.fail("%s: unknown algorithm %q (sha256, sha512, sha1 or md5)", name, alg)
	return nil
}

// jwtSign(claims, secret, {expiresIn}) is an HS256 token of claims; with
// expiresIn (seconds) it sets iat and exp.
func (h *helperSet) jwtSign(call goja.FunctionCall) goja.Value {
	claims, err := h.inv.b.toObject(call.Argument(0), "the claims")
	if err != nil || claims == nil {
		h.inv.fail("helpers.security.jwtSign: the claims must be an object")
	}
	secret := h.str(call, 1, "helpers.security.jwtSign", "the secret")
	o := h.opts(call, 2, "helpers.security.jwtSign")
	if ttl := optInt(o, "expiresIn", 0); ttl > 0 {
		now := h.inv.m.core.Now()
		claims["iat"] = now.Unix()
		claims["exp"] = now.Add(time.Duration(ttl) * time.Second).Unix()
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(claims)).SignedString([]byte(secret))
	if err != nil {
		h.inv.throw("helpers.security.jwtSign", err)
	}
	return h.inv.rt.ToValue(tok)
}

// jwtVerify(token, secret) is the claims of a valid HS256 token (its
// signature, exp and nbf checked), or a throw.
func (h *helperSet) jwtVerify(call goja.FunctionCall) goja.Value {
	tok := h.str(call, 0, "helpers.security.jwtVerify", "the token")
	secret := h.str(call, 1, "helpers.security.jwtVerify", "the secret")
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(secret), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(h.inv.m.core.Now))
	if err != nil {
		h.inv.fail("helpers.security.jwtVerify: %v", err)
	}
	return h.inv.b.fromGo(map[string]any(claims))
}
