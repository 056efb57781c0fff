// Package api owns HTTP: the chi router, the success and error envelopes
// (written in one place, respond.go), the mapping of domain errors to status
// codes (one table), authentication of the caller, the admin role table, and
// one file per resource. Each resource file declares the small interface
// its handlers call (the engine core's Records or Schema, a module such as
// engine/auth or engine/history); the composition root (cmd/svcd/stack)
// passes the service that satisfies it. Handlers parse the request, call
// that interface, and write the answer.
package api
