package auth

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of OAuth2 sign-in (engine/DESIGN.md's table: 115-119).
const (
	cmdOAuth2Authorize fsm.Type = 115
	cmdOAuth2TakeState fsm.Type = 116
	cmdOAuth2Outcome   fsm.Type = 117
	cmdOAuth2Merge     fsm.Type = 118
	cmdOAuth2Unlink    fsm.Type = 119
)

// Keys derived from the signing key for OAuth2 (secrets.go's purposes).
const (
	keyOAuth2State = "oauth2 state v1"
	keyOAuth2PKCE  = "oauth2 pkce v1"
	keyOAuth2Nonce = "oauth2 nonce v1"
	keyOAuth2Merge = "oauth2 merge v1"
)

// register wires the OAuth2 settings, tables, hooks and commands to the
// core. Results are flowOutcome values (registered by the module) and
// the spent authorization.
func (o *OAuth2) register() {
	engine.RegisterResult[oauth2Taken](o.au.core, "oauth2_taken")
	o.registerOAuth2Settings()
	o.registerOAuth2Migrations()
	o.registerOAuth2Hooks()
	c := o.au.core
	c.Command(cmdOAuth2Authorize, "auth.oauth2_authorize", o.applyAuthorize)
	c.Command(cmdOAuth2TakeState, "auth.oauth2_take_state", o.applyTakeState)
	c.Command(cmdOAuth2Outcome, "auth.oauth2_outcome", o.applyOutcome)
	c.Command(cmdOAuth2Merge, "auth.oauth2_merge", o.applyMerge)
	c.Command(cmdOAuth2Unlink, "auth.oauth2_unlink", o.applyUnlink)
}
