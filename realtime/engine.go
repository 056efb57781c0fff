package realtime

import "svcd/engine"

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
