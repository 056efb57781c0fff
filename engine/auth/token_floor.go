package auth

import "time"

// issueAfter is the issue time of a token signed at now for an account
// whose tokens issued at or before floor (unix seconds: a password reset,
// a force-logout) are refused. Token times are whole seconds, so a token
// issued in the floor's own second would be refused too: it is dated the
// next second instead (within the verifiers' clock leeway). That keeps
// "every token older than the reset is refused" exact, including tokens
// issued earlier in the same second.
func issueAfter(now time.Time, floor int64) time.Time {
	if floor > 0 && now.Unix() <= floor {
		return time.Unix(floor+1, 0)
	}
	return now
}
