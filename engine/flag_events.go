package engine

// EvFlagChange is the event kind a flag or segment write emits, for the
// realtime hub's __flags topic. Its Data is a *FlagChange. Flag commands
// emit it from their apply, in the same transaction as the change.
const EvFlagChange = "flag.change"

// FlagChange is one flag or segment change as realtime broadcasts it:
// which one changed, not its rules (clients evaluate flags again).
type FlagChange struct {
	Kind string // "flag" or "segment"
	Op   string // "create", "update" or "delete"
	Key  string // the flag's key or the segment's name
}
