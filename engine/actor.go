package engine

// Actor is who made a change, carried in the command: the proposer knows
// the caller, the state machine only what the command says. Record hooks
// receive it (RecordWrite.By); history keeps it.
type Actor struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type"` // admin, user, anonymous or system
	// Via names the code that made the change for the actor (a hook's,
	// route's or job's id; empty when the caller made it directly).
	Via string `json:"via,omitempty"`
}

// actorOf is p as an actor.
func actorOf(p Principal) *Actor {
	switch {
	case p.Kind == AdminPrincipal && p.System:
		return &Actor{Type: "system", Via: p.Via}
	case p.Kind == AdminPrincipal:
		return &Actor{ID: p.ID, Type: "admin", Via: p.Via}
	case p.Kind == User:
		return &Actor{ID: p.ID, Type: "user", Via: p.Via}
	}
	return &Actor{Type: "anonymous", Via: p.Via}
}
