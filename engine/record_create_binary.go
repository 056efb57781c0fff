package engine

// The binary form of a record create (cmd_binary.go), shared by batches
// and by modules that carry creates (RecordCreate, CSV import chunks).

// Flags of an encoded create.
const (
	createAdmin byte = 1 << iota
	createHasEnv
	createHasActor
)

// appendBinary appends c's binary form.
func (c *recordCreateCmd) appendBinary(w *binWriter) error {
	w.str(c.Coll)
	w.varint(c.Ver)
	var flags byte
	if c.Admin {
		flags |= createAdmin
	}
	if c.Env != nil {
		flags |= createHasEnv
	}
	if c.Actor != nil {
		flags |= createHasActor
	}
	w.u8(flags)
	w.str(c.ID)
	w.varint(c.Now)
	w.uvarint(uint64(len(c.Values)))
	for _, v := range c.Values {
		if err := w.storedValue(v); err != nil {
			return err
		}
	}
	if c.Env != nil {
		if err := c.Env.appendBinary(w); err != nil {
			return err
		}
	}
	if c.Actor != nil {
		w.str(c.Actor.ID)
		w.str(c.Actor.Type)
	}
	return nil
}

// readBinary reads what appendBinary wrote into c.
func (c *recordCreateCmd) readBinary(r *binReader) {
	c.Coll = r.str()
	c.Ver = r.varint()
	flags := r.u8()
	if flags&^(createAdmin|createHasEnv|createHasActor) != 0 {
		r.fail("unknown create flags")
	}
	c.Admin = flags&createAdmin != 0
	c.ID = r.str()
	c.Now = r.varint()
	c.Values = make([]any, r.count(1))
	for i := range c.Values {
		c.Values[i] = r.value()
	}
	if flags&createHasEnv != 0 {
		c.Env = &RuleEnv{}
		c.Env.readBinary(r)
	}
	if flags&createHasActor != 0 {
		c.Actor = &Actor{ID: r.str(), Type: r.str()}
	}
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
