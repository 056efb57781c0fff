// Package engine owns the domain: collections and their tables, records,
// admins and settings, and the command handlers that apply them inside the
// state machine. Its public methods validate input, resolve everything that
// is not deterministic (ids, timestamps, password hashes) and propose a
// command; its handlers apply commands deterministically in the FSM's
// transaction. Reads go to the local replica's read-only connections.
//
// It knows nothing of HTTP: errors are *Error values with a Kind that the
// api package maps to status codes.
package engine
