package csv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"svcd/engine"
)

// The binary form of an import chunk: what JSON cost per row was a fifth
// of an import's CPU (docs/benchmarks.md). Propose sends it as the
// command's version 2 payload (engine/cmd_binary.go); a chunk holding a
// value the binary form does not cover goes as JSON.
//
//	varint ver | uvarint len(coll) coll | uvarint rows | rows × uvarint row number |
//	the rows' creates (engine.AppendCreates)

// AppendBinary appends the chunk's binary form.
func (c importCmd) AppendBinary(b []byte) ([]byte, error) {
	b = slices.Grow(b, 32+len(c.Coll)+len(c.Rows)*160)
	b = binary.AppendVarint(b, c.Ver)
	b = binary.AppendUvarint(b, uint64(len(c.Coll)))
	b = append(b, c.Coll...)
	b = binary.AppendUvarint(b, uint64(len(c.Rows)))
	creates := make([]engine.RecordCreate, len(c.Rows))
	for i, r := range c.Rows {
		if r.Row < 0 {
			return nil, fmt.Errorf("%w: row number %d", engine.ErrNoBinary, r.Row)
		}
		b = binary.AppendUvarint(b, uint64(r.Row))
		creates[i] = r.Create
	}
	return engine.AppendCreates(b, creates)
}

var errChunkBinary = errors.New("csv: malformed binary import chunk")

// UnmarshalBinary reads what AppendBinary wrote.
func (c *importCmd) UnmarshalBinary(b []byte) error {
	ver, n := binary.Varint(b)
	if n <= 0 {
		return errChunkBinary
	}
	c.Ver, b = ver, b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return errChunkBinary
	}
	c.Coll, b = string(b[n:n+int(l)]), b[n+int(l):]
	rows, n := binary.Uvarint(b)
	if n <= 0 || rows > uint64(len(b)) {
		return errChunkBinary
	}
	b = b[n:]
	c.Rows = make([]importRow, rows)
	for i := range c.Rows {
		row, n := binary.Uvarint(b)
		if n <= 0 || row > 1<<40 {
			return errChunkBinary
		}
		c.Rows[i].Row, b = int(row), b[n:]
	}
	creates, err := engine.ReadCreates(b)
	if err != nil {
		return fmt.Errorf("%w: %v", errChunkBinary, err)
	}
	if len(creates) != len(c.Rows) {
		return fmt.Errorf("%w: %d creates for %d rows", errChunkBinary, len(creates), len(c.Rows))
	}
	for i := range creates {
		c.Rows[i].Create = creates[i]
	}
	return nil
}
