package harness

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// DelayProxy is a TCP relay that holds every chunk of data for a fixed
// delay before passing it on, in order, in both directions: added latency
// on one link, for a kernel without the netem qdisc. Network.Delay routes a
// node's connections to another node through one (nftables DNAT).
type DelayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// delayLink is one redirected port of one directed link.
type delayLink struct {
	port  int
	proxy *DelayProxy
}

// NewDelayProxy listens on listen (host:0 for any port) and relays to
// target with delay added each way.
func NewDelayProxy(listen, target string, delay time.Duration) (*DelayProxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &DelayProxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address.
func (p *DelayProxy) Addr() string { return p.ln.Addr().String() }

func (p *DelayProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			return
		}
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

func (p *DelayProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

type timedChunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst, each chunk delayed by p.delay from when it was
// read; on EOF it half-closes dst after the last chunk.
func (p *DelayProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan timedChunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- timedChunk{buf[:n], time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		time.Sleep(time.Until(ch.due))
		if _, err := dst.Write(ch.data); err != nil {
			src.Close()
			for range q {
			}
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	} else {
		dst.Close()
	}
}

// Close stops the proxy and drops every relayed connection.
func (p *DelayProxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// Delay adds d of latency to from's TCP connections to `to` (Raft,
// forwarding and gossip's TCP streams; gossip's UDP probes are not
// delayed). Connections already open straight to `to` are reset, so
// their owners re-dial through the proxy.
func (nw *Network) Delay(from, to string, d time.Duration) error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	dst, ok := nw.nodes[to]
	if !ok || nw.nodes[from] == nil {
		return fmt.Errorf("netns: delay %s->%s: unknown node", from, to)
	}
	if nw.delays[from] == nil {
		nw.delays[from] = map[string][]*delayLink{}
	}
	if len(nw.delays[from][to]) > 0 {
		return errors.New("netns: link already delayed")
	}
	for _, port := range []int{NetRaftPort, NetGossipPort} {
		p, err := NewDelayProxy(nw.HostIP()+":0", fmt.Sprintf("%s:%d", dst.ip, port), d)
		if err != nil {
			return err
		}
		nw.delays[from][to] = append(nw.delays[from][to], &delayLink{port: port, proxy: p})
	}
	return nw.applyLocked(from)
}
