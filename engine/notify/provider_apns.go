package notify

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
)

// apnsProvider is Apple's push service with token-based authentication:
// a JWT signed (ES256) with the team's .p8 key, sent to
// <host>/3/device/<token> over HTTP/2, one request per device token.
// Enabling it requires the team id, the key id, the .p8 key and the
// topic (the app's bundle id).
type apnsProvider struct{}

var _ provider = apnsProvider{}

func (apnsProvider) name() string { return APNs }

func (apnsProvider) members() []member {
	return []member{
		{key: "team_id"},
		{key: "key_id"},
		{key: "private_key"},
		{key: "topic"},
		// host: https://api.push.apple.com, or
		// https://api.sandbox.push.apple.com for development builds.
		{key: "host", def: "https://api.push.apple.com", url: true},
	}
}

func (apnsProvider) check(cfg map[string]string) map[string]string {
	bad := map[string]string{}
	required(cfg, bad, "team_id", "key_id", "private_key", "topic")
	if _, missing := bad["private_key"]; !missing {
		if msg := p8Problem(cfg["private_key"]); msg != "" {
			bad["private_key"] = msg
		}
	}
	return bad
}

func (apnsProvider) devices() bool { return true }

// p8Problem says why pemText is not an APNs auth key (a P-256 ECDSA
// private key in PKCS #8 PEM, as the .p8 file holds it), or "".
func p8Problem(pemText string) string {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return "must be the .p8 key's PEM text (-----BEGIN PRIVATE KEY-----...)"
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return "must be a PKCS #8 private key (the .p8 file): " + err.Error()
	}
	if _, ok := k.(*ecdsa.PrivateKey); !ok {
		return "must be an ECDSA (P-256) key, as Apple's .p8 keys are"
	}
	return ""
}
