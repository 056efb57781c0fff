// Package realtime fans committed record changes out to subscribers on
// this node. It knows no transport: the api package speaks WebSocket and
// SSE and drives a Conn per client.
//
// Every node's state machine applies the same log, so every node's Hub sees
// the same record events in the same order, stamped with their Raft index.
// An event's id is that index (plus ".n" for the n-th further event of the
// same command), so a client gets the same ids from any node and can resume
// on another one with Last-Event-ID.
//
// The Hub keeps one replay ring of the events of the last
// realtime.retention_sec seconds. Live delivery and replay are the same
// thing: each Conn is a cursor into the ring, and its transport goroutine
// pulls the events after the cursor, filters them (topics, filters, the
// collection's view rule as the connection's principal) and writes them.
// The state machine's observer only appends and wakes readers; it never
// waits for a client. A Conn whose cursor falls more than MaxPending
// events behind, or behind the ring's oldest event, is failed with
// ErrSlowConsumer and its transport closes it with an error frame.
//
// Credentials are checked for as long as a connection uses them
// (credentials.go): the observer flags the connections a committed
// credential event may touch, and each rechecks its principal on its own
// goroutine before it takes any later event. A connection whose credential
// ended carries on as anonymous after an unauthorized message, or ends
// (ConnOptions.CloseOnRevoke: SSE); an expiry timer does the same when the
// token runs out.
//
// Rules, record rendering and credentials belong to the engine: the
// package asks an Authorizer (EngineAuthorizer adapts the engine and its auth module).
package realtime
