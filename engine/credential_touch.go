package engine

// CredentialTouch names the principals whose credential or rights a
// committed event may have changed: what holders of long-lived principals
// (open realtime streams) must Recheck.
type CredentialTouch struct {
	// Match reports whether the event may have changed p.
	Match func(p Principal) bool
	// ID, when set, is the only Principal.ID Match can accept, and TokenID
	// the only Principal.TokenID: a holder that indexes its principals
	// need only test those. Both empty: any principal may match.
	ID, TokenID string
}
