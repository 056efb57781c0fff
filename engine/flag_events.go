package engine

// EvFlagChange is the event kind of a feature flag or segment change, for
// the realtime hub's __flags topic; its Data is a *FlagChange. The kind
// lives in the core because realtime, which must not import modules,
// subscribes to it. Nothing emits it yet: the flags module (engine/flags,
// to come) will, from the apply of its flag and segment commands, in the
// same transaction as the change.
const EvFlagChange = "flag.change"

// FlagChange is one flag or segment change as realtime broadcasts it:
// which one changed, not its rules (clients evaluate flags again).
type FlagChange struct {
	Kind string // "flag" or "segment"
	Op   string // "create", "update" or "delete"
	Key  string // the flag's key or the segment's name
}
