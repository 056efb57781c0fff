package auth

import "svcd/engine"

// Errors of sign-in and admin setup.
var (
	// ErrInvalidCreds is the answer to a sign-in that fails, whatever the
	// reason (unknown account, wrong password or code).
	ErrInvalidCreds = &engine.Error{Kind: engine.KindUnauthorized, Message: "Invalid credentials"}
	errAdminExists  = &engine.Error{Kind: engine.KindConflict, Message: "An admin already exists"}
)
