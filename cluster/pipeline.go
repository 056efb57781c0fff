package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// guardedTransport is raft's NetworkTransport with one change: a
// replication pipeline that receives a refusal shuts itself down.
//
// hashicorp/raft (v1.7.3, hashicorp/raft#612) stops reading a pipeline's
// responses as soon as a follower refuses an entry (its disk was full, a
// log write failed, it lost an entry), but its send loop may still pick
// one more trigger before it notices. With the transport's default of two
// requests in flight both hand-off channels are unbuffered, so that send
// parks forever: the leader never replicates to the follower again, while
// heartbeats keep it from timing out and forcing the election that would
// heal it. Restarting the follower does not help; only a new leader does.
//
// Closing the pipeline right after the refusal has been delivered unparks
// the send (it fails with ErrPipelineShutdown), and raft falls back to
// request/response replication, which finds the follower's last entry and
// carries on. Everything else is the embedded transport's.
type guardedTransport struct {
	*raft.NetworkTransport
}

// AppendEntriesPipeline returns the transport's pipeline behind the guard.
func (t guardedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	g := &guardedPipeline{inner: p, done: make(chan raft.AppendFuture), stop: make(chan struct{})}
	go g.forward()
	return g, nil
}

// guardedPipeline relays the inner pipeline's responses and closes it
// after relaying the first refusal or failure.
type guardedPipeline struct {
	inner raft.AppendPipeline
	done  chan raft.AppendFuture
	stop  chan struct{}
	once  sync.Once
}

func (g *guardedPipeline) forward() {
	in := g.inner.Consumer()
	for {
		select {
		case f := <-in:
			select {
			case g.done <- f:
			case <-g.stop:
				return
			}
			if f.Error() != nil || !f.Response().Success {
				// Raft's reader has returned: nothing reads this pipeline
				// any more, so a send still under way must not wait for it.
				g.inner.Close()
				return
			}
		case <-g.stop:
			return
		}
	}
}

// AppendEntries sends one request down the pipeline.
func (g *guardedPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	return g.inner.AppendEntries(args, resp)
}

// Consumer is where the responses arrive, in the order of the requests.
func (g *guardedPipeline) Consumer() <-chan raft.AppendFuture { return g.done }

// Close stops the relay and closes the inner pipeline.
func (g *guardedPipeline) Close() error {
	g.once.Do(func() { close(g.stop) })
	return g.inner.Close()
}
