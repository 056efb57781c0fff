package fsm

import "fmt"

// Handler applies one command inside the batch transaction. It returns the
// command's result (handed back to the proposer on the node that proposed
// it) or an error; an error rolls back this command alone. A handler must be
// deterministic: every node runs it on the same state and must reach the same
// outcome.
type Handler func(tx *Tx, cmd Command) (any, error)

// Registry maps command types to handlers. It is filled at wiring time,
// before the first entry is applied, and read-only afterwards.
type Registry struct {
	handlers map[Type]Handler
	names    map[Type]string
	// replacers are the handlers of replace commands (replace.go).
	replacers map[Type]ReplaceHandler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{handlers: map[Type]Handler{}, names: map[Type]string{}}
}

// Register adds the handler for t. Registering a type twice is a wiring bug
// and panics.
func (r *Registry) Register(t Type, name string, h Handler) {
	if _, dup := r.handlers[t]; dup {
		panic(fmt.Sprintf("fsm: command type %d (%s) registered twice", t, name))
	}
	r.handlers[t] = h
	r.names[t] = name
}

func (r *Registry) lookup(t Type) (Handler, bool) {
	h, ok := r.handlers[t]
	return h, ok
}

// Knows reports whether this binary can apply cmd: its type is registered,
// or it carries FlagIgnoreUnknown. A leader asks before it proposes a
// command a follower forwarded: a newer follower may send a type this
// binary does not know, which would stop this replica (rolling upgrades,
// docs/operations.md).
func (r *Registry) Knows(cmd Command) bool {
	_, ok := r.handlers[cmd.Type]
	return ok || cmd.Flags&FlagIgnoreUnknown != 0
}

// Name returns the registered name of t, for logs.
func (r *Registry) Name(t Type) string {
	if n, ok := r.names[t]; ok {
		return n
	}
	return fmt.Sprintf("type-%d", t)
}
