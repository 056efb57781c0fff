package auth

import "svcd/engine"

// oauth2SchemaVersion is the internal schema version that adds the OAuth2
// tables; the module's hooks and reads skip them on a replica that has not
// migrated to it yet.
const oauth2SchemaVersion = 14

// registerOAuth2Migrations adds the OAuth2 tables. A released version is
// never edited.
func (o *OAuth2) registerOAuth2Migrations() {
	o.au.core.Migration(engine.Migration{Version: oauth2SchemaVersion, Owner: "auth", Stmts: []string{
		// Authorizations begun and not yet exchanged, by keyed hash of
		// (collection, state): the provider, redirect URI and PKCE mode
		// the exchange must match. Spent by the first exchange.
		`CREATE TABLE _svc_oauth2_states (key TEXT PRIMARY KEY, coll TEXT NOT NULL, provider TEXT NOT NULL,
			redirect_uri TEXT NOT NULL, pkce TEXT NOT NULL, challenge TEXT NOT NULL,
			expires_at INTEGER NOT NULL) WITHOUT ROWID`,
		// Identities linked to accounts: one per provider and account.
		`CREATE TABLE _svc_oauth2_links (coll TEXT NOT NULL, provider TEXT NOT NULL, subject TEXT NOT NULL,
			user_id TEXT NOT NULL, email TEXT NOT NULL, created INTEGER NOT NULL, last_used INTEGER NOT NULL,
			PRIMARY KEY (coll, provider, subject)) WITHOUT ROWID`,
		`CREATE UNIQUE INDEX _svc_oauth2_links_user ON _svc_oauth2_links (coll, user_id, provider)`,
		// Merge tokens, by keyed hash: the identity waiting to be linked
		// to the account whose verified email it bears, wrong passwords.
		`CREATE TABLE _svc_oauth2_merges (hash TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			provider TEXT NOT NULL, subject TEXT NOT NULL, email TEXT NOT NULL, attempts INTEGER NOT NULL,
			expires_at INTEGER NOT NULL) WITHOUT ROWID`,
		`CREATE INDEX _svc_oauth2_merges_user ON _svc_oauth2_merges (coll, user_id)`,
	}})
}
