package cluster

import "errors"

var (
	// ErrNoLeader means no leader could be reached in time; the command was
	// not proposed. Clients may retry.
	ErrNoLeader = errors.New("cluster: no leader available")
	// ErrIndeterminate means the command was proposed but leadership was
	// lost before its outcome was known: it may or may not have committed.
	ErrIndeterminate = errors.New("cluster: leadership lost, outcome unknown")
	// ErrShutdown means the node is shutting down.
	ErrShutdown = errors.New("cluster: node is shutting down")
)
