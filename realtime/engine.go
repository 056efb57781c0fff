package realtime

import (
	"context"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Credentials is what realtime needs of the auth module (engine/auth):
// rechecking a stream's credential, when it expires, and which principals
// a committed event may have changed.
type Credentials interface {
	Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error)
	Expiry(p engine.Principal) time.Time
	CredentialsTouched(ev fsm.Event) *engine.CredentialTouch
}

// EngineAuthorizer adapts the engine's core (record visibility) and the
// credentials of the auth module to Authorizer.
func EngineAuthorizer(e *engine.Engine, c Credentials) Authorizer { return engineAuth{e, c} }

type engineAuth struct {
	e *engine.Engine
	c Credentials
}

func (a engineAuth) Collection(name string) string { return a.e.RealtimeCollection(name) }

func (a engineAuth) View(p engine.Principal, ch *engine.RecordChange) View {
	if r := a.e.RealtimeView(p, ch); r != nil {
		return r
	}
	return nil
}

func (a engineAuth) Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error) {
	return a.c.Recheck(ctx, p)
}

func (a engineAuth) Expiry(p engine.Principal) time.Time { return a.c.Expiry(p) }

func (a engineAuth) Touched(ev fsm.Event) *engine.CredentialTouch { return a.c.CredentialsTouched(ev) }
