package jsvm

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"github.com/dop251/goja"
)

// programs caches compiled programs by the hash of their code: a program
// is independent of the runtime that runs it, so every pooled runtime
// shares one compilation per code version. Least recently used programs
// leave first when the cache is full.
type programs struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cached, most recent first
	byKey map[[32]byte]*list.Element
}

type cached struct {
	key [32]byte
	prg *goja.Program
}

func newPrograms(max int) *programs {
	return &programs{max: max, order: list.New(), byKey: make(map[[32]byte]*list.Element)}
}

// get returns the compiled program of code, compiling it on a miss. Two
// callers missing at once both compile; the second result wins, harmlessly.
func (p *programs) get(code string) (*goja.Program, error) {
	key := sha256.Sum256([]byte(wrapperVersion + "\x00" + code))
	p.mu.Lock()
	if el, ok := p.byKey[key]; ok {
		p.order.MoveToFront(el)
		prg := el.Value.(*cached).prg
		p.mu.Unlock()
		return prg, nil
	}
	p.mu.Unlock()
	prg, err := compile(code)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.byKey[key]; ok {
		p.order.MoveToFront(el)
		return prg, nil
	}
	p.byKey[key] = p.order.PushFront(&cached{key: key, prg: prg})
	for p.order.Len() > p.max {
		last := p.order.Back()
		p.order.Remove(last)
		delete(p.byKey, last.Value.(*cached).key)
	}
	return prg, nil
}

// len is how many programs are cached.
func (p *programs) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.order.Len()
}
