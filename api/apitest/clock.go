package apitest

import (
	"sync"
	"time"
)

// Clock is a wall clock a test moves by hand: it stands still until
// Advance or Set moves it. Pass its Now as Options.Clock, and the node
// (the engine, token verification, the realtime hub) reads it instead of
// time.Now, so a test about whole-second token times or expiries moves
// time on instead of sleeping. Raft's timers, HTTP deadlines and the rate
// limiter keep real time, and so does a timer armed from the clock (a
// stream's credential expiry): moving the clock does not fire it early.
// It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// Set moves the clock to t (backwards too, as a stepped system clock
// would).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
