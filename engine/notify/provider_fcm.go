package notify

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
)

// fcmProvider is Firebase Cloud Messaging's HTTP v1 API ("the
// cloud-messaging provider"): one request per device token, authenticated
// with an OAuth2 access token minted from a service account. Enabling it
// requires the service account's JSON (as Google's console downloads it)
// and a project id, which falls back to the JSON's own.
type fcmProvider struct{}

var _ provider = fcmProvider{}

func (fcmProvider) name() string { return FCM }

func (fcmProvider) members() []member {
	return []member{
		{key: "project_id"},
		{key: "service_account"},
		// endpoint is the API's base: POST
		// <endpoint>/v1/projects/<project>/messages:send.
		{key: "endpoint", def: "https://fcm.googleapis.com", url: true},
		// token_url replaces the service account's token_uri (empty: the
		// account's, else Google's).
		{key: "token_url", url: true},
	}
}

func (fcmProvider) check(cfg map[string]string) map[string]string {
	bad := map[string]string{}
	sa, msg := parseServiceAccount(cfg["service_account"])
	if msg != "" {
		bad["service_account"] = msg
		return bad
	}
	if strings.TrimSpace(cfg["project_id"]) == "" && sa.ProjectID == "" {
		bad["project_id"] = "is required: the service account names no project_id"
	}
	return bad
}

func (fcmProvider) devices() bool { return true }

// serviceAccount is what the module checks of a Google service account
// key file.
type serviceAccount struct {
	Type        string `json:"type"`
	ProjectID   string `json:"project_id"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	TokenURI    string `json:"token_uri"`
}

// parseServiceAccount reads a service account's JSON; the message says
// what is wrong with it ("" when nothing is).
func parseServiceAccount(raw string) (*serviceAccount, string) {
	if strings.TrimSpace(raw) == "" {
		return nil, "is required to enable the provider: the service account's JSON key"
	}
	var sa serviceAccount
	if err := json.Unmarshal([]byte(raw), &sa); err != nil {
		return nil, "must be valid JSON (the service account's key file): " + err.Error()
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"client_email", sa.ClientEmail}, {"private_key", sa.PrivateKey}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	switch {
	case sa.Type != "service_account":
		return nil, `must be a service account's key file ("type": "service_account")`
	case len(missing) > 0:
		return nil, "must have " + strings.Join(missing, " and ") + " (the service account's key file)"
	case sa.TokenURI != "" && !validURL(sa.TokenURI):
		return nil, "token_uri must be an http or https URL"
	}
	if msg := rsaKeyProblem(sa.PrivateKey); msg != "" {
		return nil, "private_key " + msg
	}
	return &sa, ""
}

// rsaKeyProblem says why pemText is not an RSA private key in PEM
// (PKCS #8 or PKCS #1), or "".
func rsaKeyProblem(pemText string) string {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return "must be a PEM private key"
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); ok {
			return ""
		}
		return "must be an RSA key"
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return ""
	}
	return "must be an RSA private key (PKCS #8 or PKCS #1)"
}
