package realtime

import (
	"context"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// EngineAuthorizer adapts the engine to Authorizer.
func EngineAuthorizer(e *engine.Engine) Authorizer { return engineAuth{e} }

type engineAuth struct{ e *engine.Engine }

func (a engineAuth) Collection(name string) string { return a.e.RealtimeCollection(name) }

func (a engineAuth) View(p engine.Principal, ch *engine.RecordChange) View {
	if r := a.e.RealtimeView(p, ch); r != nil {
		return r
	}
	return nil
}

func (a engineAuth) Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error) {
	return a.e.Recheck(ctx, p)
}

func (a engineAuth) Expiry(p engine.Principal) time.Time { return a.e.Expiry(p) }

func (a engineAuth) Touched(ev fsm.Event) *engine.CredentialTouch { return a.e.CredentialsTouched(ev) }
