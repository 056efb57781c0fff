package engine

import "slices"

// The binary form of a batch (cmd_binary.go) covers batches whose every
// entry is a create, the bulk case; any other batch is proposed as JSON.

// batchEntryCreate tags a create entry (the only kind with a binary form).
const batchEntryCreate byte = 1

// AppendBinary appends the batch's binary form, or reports ErrNoBinary
// when an entry is not a create.
func (c batchCmd) AppendBinary(b []byte) ([]byte, error) {
	for _, op := range c.Ops {
		if op.Create == nil {
			return nil, ErrNoBinary
		}
	}
	w := &binWriter{b: slices.Grow(b, 16+len(c.Ops)*160)}
	w.varint(c.ReadBudget)
	w.uvarint(uint64(len(c.Ops)))
	for _, op := range c.Ops {
		w.u8(batchEntryCreate)
		if err := op.Create.appendBinary(w); err != nil {
			return nil, err
		}
	}
	return w.b, nil
}

// UnmarshalBinary reads what AppendBinary wrote.
func (c *batchCmd) UnmarshalBinary(b []byte) error {
	r := &binReader{b: b}
	c.ReadBudget = r.varint()
	n := r.count(2)
	c.Ops = make([]batchOpCmd, n)
	creates := make([]recordCreateCmd, n)
	for i := range c.Ops {
		if r.u8() != batchEntryCreate {
			r.fail("unknown batch entry")
			break
		}
		creates[i].readBinary(r)
		c.Ops[i].Create = &creates[i]
	}
	return r.done()
}
