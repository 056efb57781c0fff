// Package api owns HTTP: the chi router, the success and error envelopes
// (written in one place, respond.go), the mapping of domain errors to status
// codes (one table), authentication of the caller, the admin role table, and
// one file per resource. Handlers parse the request, call the engine through
// the small interfaces declared here, and write the answer.
package api
