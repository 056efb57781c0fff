// Package mcp is svcd's agent protocol: a Model Context Protocol server
// (JSON-RPC 2.0, protocol revision 2025-06-18) whose tools, resources and
// prompts are rebuilt on every request from the collections and the
// calling API token's `mcp:*` scopes.
//
// The package is the protocol and the catalogue, not the transport: the
// HTTP layer (api/mcp.go, Streamable HTTP) and the stdio bridge
// (`svcd mcp`) hand it one JSON-RPC message at a time with the caller's
// principal, and write back what it answers.
//
// Why not the official Go SDK (github.com/modelcontextprotocol/go-sdk):
// its server binds a tool set to a session at initialize, while SPEC.md
// wants the registry rebuilt per request (a collection created mid-session,
// a scope revoked, a role lowered all apply to the next call); it answers
// a call to a tool the session does not list with its own code, where
// CONTRACT.md wants -32001 for a missing scope; and it imports net/http,
// which an engine module may not (deps_test.go), so the protocol layer
// would have had to live in api/. The protocol surface we need (six
// request methods, two notifications) is small; the SDK's Node.js
// counterpart is the client our tests drive, which checks us against the
// project's own schemas.
//
// Every tool acts through Backend: the same HTTP routes, rules, role table,
// audit and Raft path as the REST API, with the token's admin as the
// principal and its mcp scopes translated (scopes.go). A tool can never do
// what a REST call by the same admin could not.
package mcp
