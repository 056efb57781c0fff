package csv

import (
	"encoding/binary"
	"errors"
	"fmt"

	"svcd/engine"
)

// The binary form of an import chunk: what JSON cost per row was a fifth
// of an import's CPU (docs/benchmarks.md). Propose sends it as the
// command's version 2 payload (engine/cmd_binary.go); a chunk holding a
// value the binary form does not cover goes as JSON.
//
//	varint ver | uvarint len(coll) coll | uvarint rows |
//	rows × (uvarint row number | uvarint len(create) create)

// AppendBinary appends the chunk's binary form.
func (c importCmd) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, c.Ver)
	b = binary.AppendUvarint(b, uint64(len(c.Coll)))
	b = append(b, c.Coll...)
	b = binary.AppendUvarint(b, uint64(len(c.Rows)))
	var scratch []byte
	for _, r := range c.Rows {
		if r.Row < 0 {
			return nil, fmt.Errorf("%w: row number %d", engine.ErrNoBinary, r.Row)
		}
		var err error
		if scratch, err = r.Create.AppendBinary(scratch[:0]); err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(r.Row))
		b = binary.AppendUvarint(b, uint64(len(scratch)))
		b = append(b, scratch...)
	}
	return b, nil
}

var errChunkBinary = errors.New("csv: malformed binary import chunk")

// UnmarshalBinary reads what AppendBinary wrote.
func (c *importCmd) UnmarshalBinary(b []byte) error {
	ver, n := binary.Varint(b)
	if n <= 0 {
		return errChunkBinary
	}
	c.Ver, b = ver, b[n:]
	coll, b, ok := lenPrefixed(b)
	if !ok {
		return errChunkBinary
	}
	c.Coll = string(coll)
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
		var create []byte
		if create, b, ok = lenPrefixed(b); !ok {
			return errChunkBinary
		}
		if err := c.Rows[i].Create.UnmarshalBinary(create); err != nil {
			return fmt.Errorf("csv: chunk row %d: %w", i, err)
		}
	}
	if len(b) != 0 {
		return errChunkBinary
	}
	return nil
}

// lenPrefixed splits a uvarint-length-prefixed field off b.
func lenPrefixed(b []byte) (field, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, b, false
	}
	end := n + int(l)
	return b[n:end:end], b[end:], true
}
