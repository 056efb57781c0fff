package suite

import (
	"context"
	"sync"
	"time"
)

// monitor polls every node's view of the cluster (term, leader) four
// times a second, to count elections and leader changes over a run.
type monitor struct {
	env  *Env
	quit chan struct{}
	done chan struct{}

	mu        sync.Mutex
	firstTerm uint64
	lastTerm  uint64
	leader    string
	changes   int
}

func startMonitor(env *Env) *monitor {
	m := &monitor{env: env, quit: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	return m
}

func (m *monitor) run() {
	defer close(m.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		m.poll()
		select {
		case <-m.quit:
			return
		case <-tick.C:
		}
	}
}

func (m *monitor) poll() {
	for _, nd := range m.env.C.Running() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		st, err := m.env.C.AdminState(ctx, nd, false)
		cancel()
		if err != nil {
			continue
		}
		m.mu.Lock()
		if m.firstTerm == 0 || st.Term < m.firstTerm {
			m.firstTerm = st.Term
		}
		if m.lastTerm != 0 && st.Term > m.lastTerm {
			// Logged beside the nemesis's lines, so an election can be
			// matched with the fault (or the lack of one) that caused it.
			m.logf("term %d seen on %s (%s, leader %q)", st.Term, nd.Name, st.State, st.LeaderID)
		}
		m.lastTerm = max(m.lastTerm, st.Term)
		if st.State == "Leader" && st.NodeID != m.leader {
			if m.leader != "" {
				m.changes++
				m.logf("leader %s (term %d), was %s", st.NodeID, st.Term, m.leader)
			}
			m.leader = st.NodeID
		}
		m.mu.Unlock()
	}
}

// logf logs like the nemesis, timestamped, so the two read as one timeline.
func (m *monitor) logf(format string, args ...any) {
	m.env.T.Logf("%s monitor: "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func (m *monitor) stop() {
	close(m.quit)
	<-m.done
}

// elections is how many terms the cluster went through (each term starts
// with an election, won or not) and how many times the leader changed.
func (m *monitor) elections() (terms, changes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int(m.lastTerm - m.firstTerm), m.changes
}
