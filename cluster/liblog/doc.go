// Package liblog routes the logs of the libraries the cluster runs on,
// hashicorp/raft (an hclog.Logger) and hashicorp/memberlist (a standard
// *log.Logger writing "[LEVEL] memberlist: ..." lines), into the node's
// slog.Logger: one format and one set of attributes (the node's id among
// them) for every line the process writes.
//
// On the way it sorts out the one kind of library noise that is expected:
// a peer that is starting, restarting or joining refuses connections for a
// moment, and raft and memberlist log each refusal at ERROR
// ("failed to appendEntries to", "failed to heartbeat to", "Push/Pull with
// ... failed"). See noise.go for the rule.
package liblog
