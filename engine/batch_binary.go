package engine

import "slices"

// The binary form of a batch (cmd_binary.go) covers batches whose every
// entry is a create, the bulk case; any other batch is proposed as JSON.
//
//	varint read budget | run of creates (record_create_binary.go)

// AppendBinary appends the batch's binary form, or reports ErrNoBinary
// when an entry is not a create.
func (c batchCmd) AppendBinary(b []byte) ([]byte, error) {
	creates := make([]*recordCreateCmd, len(c.Ops))
	for i, op := range c.Ops {
		if op.Create == nil {
			return nil, ErrNoBinary
		}
		creates[i] = op.Create
	}
	w := &binWriter{b: slices.Grow(b, 16+len(c.Ops)*160)}
	w.varint(c.ReadBudget)
	if err := appendCreates(w, creates); err != nil {
		return nil, err
	}
	return w.b, nil
}

// UnmarshalBinary reads what AppendBinary wrote.
func (c *batchCmd) UnmarshalBinary(b []byte) error {
	r := &binReader{b: b}
	c.ReadBudget = r.varint()
	creates := readCreates(r)
	c.Ops = make([]batchOpCmd, len(creates))
	for i := range creates {
		c.Ops[i].Create = &creates[i]
	}
	return r.done()
}
