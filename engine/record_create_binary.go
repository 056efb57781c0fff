package engine

import "bytes"

// The binary form of record creates (cmd_binary.go), shared by batches
// and by modules whose commands carry creates (CSV import chunks). Creates
// are encoded as a run: the entries of one request share their
// collection, rule environment and actor, so an entry that repeats the
// previous one's says so in a flag instead of carrying them again (and
// the decoded entries share one value, read only in the apply).
//
//	uvarint n | n × (flags | [coll | varint ver] | id | varint now |
//	                 uvarint len(values) values | [env] | [actor])

// Flags of an encoded create.
const (
	createAdmin byte = 1 << iota
	createHasEnv
	createHasActor
	createSameColl  // coll and ver are the previous entry's
	createSameEnv   // env is the previous entry's (with createHasEnv)
	createSameActor // actor is the previous entry's (with createHasActor)
	createFlags     = createAdmin | createHasEnv | createHasActor | createSameColl | createSameEnv | createSameActor
)

// createRunWriter appends a run of creates, remembering what the previous
// entry carried.
type createRunWriter struct {
	w               *binWriter
	prev            *recordCreateCmd
	prevEnv, envBuf []byte
}

func appendCreates(w *binWriter, creates []*recordCreateCmd) error {
	w.uvarint(uint64(len(creates)))
	rw := &createRunWriter{w: w}
	for _, c := range creates {
		if err := rw.append(c); err != nil {
			return err
		}
	}
	return nil
}

func (rw *createRunWriter) append(c *recordCreateCmd) error {
	w := rw.w
	var flags byte
	if c.Admin {
		flags |= createAdmin
	}
	if rw.prev != nil && rw.prev.Coll == c.Coll && rw.prev.Ver == c.Ver {
		flags |= createSameColl
	}
	var env []byte
	switch {
	case c.Env == nil:
	case rw.prev != nil && rw.prev.Env == c.Env:
		// The very environment of the previous entry (a batch's or an
		// import's entries share one): the same bytes, not encoded again.
		flags |= createHasEnv | createSameEnv
	default:
		flags |= createHasEnv
		ew := &binWriter{b: rw.envBuf[:0], keys: rw.w.keys}
		if err := c.Env.appendBinary(ew); err != nil {
			return err
		}
		env, rw.envBuf = ew.b, ew.b
		if rw.prev != nil && rw.prev.Env != nil && bytes.Equal(env, rw.prevEnv) {
			flags |= createSameEnv
		}
	}
	if c.Actor != nil {
		if c.Actor.Via != "" {
			// The binary form carries an actor's id and type only.
			return ErrNoBinary
		}
		flags |= createHasActor
		if rw.prev != nil && rw.prev.Actor != nil && *rw.prev.Actor == *c.Actor {
			flags |= createSameActor
		}
	}
	w.u8(flags)
	if flags&createSameColl == 0 {
		w.str(c.Coll)
		w.varint(c.Ver)
	}
	w.str(c.ID)
	w.varint(c.Now)
	w.uvarint(uint64(len(c.Values)))
	for _, v := range c.Values {
		if err := w.storedValue(v); err != nil {
			return err
		}
	}
	if flags&createHasEnv != 0 && flags&createSameEnv == 0 {
		w.b = append(w.b, env...)
		rw.prevEnv = append(rw.prevEnv[:0], env...)
	}
	if flags&createHasActor != 0 && flags&createSameActor == 0 {
		w.str(c.Actor.ID)
		w.str(c.Actor.Type)
	}
	rw.prev = c
	return nil
}

// readCreates reads a run of creates.
func readCreates(r *binReader) []recordCreateCmd {
	out := make([]recordCreateCmd, r.count(4))
	for i := range out {
		c := &out[i]
		flags := r.u8()
		if flags&^createFlags != 0 || (i == 0 && flags&(createSameColl|createSameEnv|createSameActor) != 0) {
			r.fail("bad create flags")
			return nil
		}
		c.Admin = flags&createAdmin != 0
		if flags&createSameColl != 0 {
			c.Coll, c.Ver = out[i-1].Coll, out[i-1].Ver
		} else {
			c.Coll = r.str()
			c.Ver = r.varint()
		}
		c.ID = r.str()
		c.Now = r.varint()
		c.Values = make([]any, r.count(1))
		for k := range c.Values {
			c.Values[k] = r.value()
		}
		switch {
		case flags&createHasEnv == 0:
			if flags&createSameEnv != 0 {
				r.fail("bad create flags")
			}
		case flags&createSameEnv != 0:
			if c.Env = out[i-1].Env; c.Env == nil {
				r.fail("no environment to repeat")
			}
		default:
			c.Env = &RuleEnv{}
			c.Env.readBinary(r)
		}
		switch {
		case flags&createHasActor == 0:
			if flags&createSameActor != 0 {
				r.fail("bad create flags")
			}
		case flags&createSameActor != 0:
			if c.Actor = out[i-1].Actor; c.Actor == nil {
				r.fail("no actor to repeat")
			}
		default:
			c.Actor = &Actor{ID: r.str(), Type: r.str()}
		}
		if r.err != nil {
			return nil
		}
	}
	return out
}

func (e *RuleEnv) appendBinary(w *binWriter) error {
	w.varint(e.Now)
	w.str(e.Method)
	w.str(e.Context)
	if err := w.anyMap(e.Auth); err != nil {
		return err
	}
	w.strMap(e.Headers)
	w.strMap(e.Query)
	return w.anyMap(e.Body)
}

func (e *RuleEnv) readBinary(r *binReader) {
	e.Now = r.varint()
	e.Method = r.str()
	e.Context = r.str()
	e.Auth = r.anyMap()
	e.Headers = r.strMap()
	e.Query = r.strMap()
	e.Body = r.anyMap()
}

// AppendBinary appends a single create's binary form: a run of one.
func (c recordCreateCmd) AppendBinary(b []byte) ([]byte, error) {
	w := &binWriter{b: b}
	if err := appendCreates(w, []*recordCreateCmd{&c}); err != nil {
		return nil, err
	}
	return w.b, nil
}

// UnmarshalBinary reads what AppendBinary wrote.
func (c *recordCreateCmd) UnmarshalBinary(b []byte) error {
	r := &binReader{b: b}
	cs := readCreates(r)
	if err := r.done(); err != nil {
		return err
	}
	if len(cs) != 1 {
		return errBinary
	}
	*c = cs[0]
	return nil
}
