package engine

// Actor is who made a change, carried in the command: the proposer knows
// the caller, the state machine only what the command says. Record hooks
// receive it (RecordWrite.By); history keeps it.
type Actor struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"` // admin, user or anonymous
}

// actorOf is p as an actor.
func actorOf(p Principal) *Actor {
	switch p.Kind {
	case AdminPrincipal:
		return &Actor{ID: p.ID, Type: "admin"}
	case User:
		return &Actor{ID: p.ID, Type: "user"}
	}
	return &Actor{Type: "anonymous"}
}
