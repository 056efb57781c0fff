package cluster

import (
	"fmt"
	"sync"
	"time"
)

// JoinVerifier checks the join requests sent to one member: signed with
// the cluster key, for this member, recent, and never seen before. It
// remembers each signature it accepted until the signature's timestamp
// leaves the joinSkew window (after that the timestamp alone refuses it),
// so it holds at most the joins of the last two minutes, and only
// authenticated ones: an outsider cannot make it grow. It forgets on
// restart; a signature older than the verifier is refused for that reason.
type JoinVerifier struct {
	key, self string
	started   time.Time

	mu   sync.Mutex
	seen map[string]time.Time // HMAC -> when it may be forgotten
}

// NewJoinVerifier returns the verifier of member self, started at now.
func NewJoinVerifier(clusterKey, self string, now time.Time) *JoinVerifier {
	return &JoinVerifier{key: clusterKey, self: self, started: now, seen: map[string]time.Time{}}
}

// Verify accepts a join of body carrying header at time now, once.
func (v *JoinVerifier) Verify(header string, now time.Time, body []byte) error {
	sig, err := verifyJoinSignature(v.key, header, now, body)
	if err != nil {
		return err
	}
	if sig.target != v.self {
		return fmt.Errorf("%w: it names %q, this member is %q", ErrJoinOtherNode, sig.target, v.self)
	}
	if sig.at.Before(v.started) {
		return fmt.Errorf("%w: it was signed before this member started", ErrJoinReplayed)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for mac, until := range v.seen {
		if now.After(until) {
			delete(v.seen, mac)
		}
	}
	if _, dup := v.seen[sig.mac]; dup {
		return ErrJoinReplayed
	}
	v.seen[sig.mac] = sig.at.Add(joinSkew)
	return nil
}
