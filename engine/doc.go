// Package engine is the domain's core: the command kernel (Propose, the
// registries of commands, result codecs, migrations, settings and hooks),
// collections and the schema cache, records and batches under rules and
// rights, settings, ids, errors and principals. Its public methods
// validate input, resolve everything that is not deterministic (ids,
// timestamps, password hashes) and propose a command; its handlers apply
// commands deterministically in the state machine's transaction. Reads go
// to the local replica's read-only connections.
//
// Everything else is a module in a package under engine/ (auth, search,
// history, csv, ...) that imports the core and registers on it at wiring
// time; the core never imports a module. Engine is the kernel; Records and
// Schema are its services for app data. DESIGN.md says why, and how a
// command is added end to end.
//
// It knows nothing of HTTP: errors are *Error values with a Kind that the
// api package maps to status codes.
package engine
