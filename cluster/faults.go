package cluster

// Faults are deliberate defects that let the jepsen suite prove its
// checkers catch a broken build. Production builds never set them: only
// cmd/svcd/stack built with the svcfaults tag reads them from the
// environment. The zero value is the correct behaviour.
type Faults struct {
	// AckBeforeApply makes a follower answer a forwarded write as soon as
	// the leader reports it committed, without waiting to apply it and
	// without raising the read floor: a local read right after may miss it.
	AckBeforeApply bool
	// LocalReadIndex makes strong reads use this replica's applied index
	// instead of the leader's quorum-confirmed commit index: a partitioned
	// or lagging node serves stale "strong" reads.
	LocalReadIndex bool
}
