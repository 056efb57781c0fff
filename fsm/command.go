package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Type identifies a command; the engine owns the numbering (see
// engine/commands.go). Types are never reused.
type Type uint16

// Flags modify how a node treats a command.
type Flags uint8

const (
	// FlagIgnoreUnknown lets a node that does not know the command's type
	// skip it (a newer command during a rolling upgrade whose effect an older
	// node may safely miss). Without it an unknown type stops the node.
	FlagIgnoreUnknown Flags = 1 << 0
)

// envelopeMagic is the first byte of every encoded command: the envelope
// format version. A future format gets a new magic.
const envelopeMagic byte = 0xC1

const headerLen = 5

// Command is the unit proposed to the log: a type, the version of that
// type's payload schema, flags and an opaque payload (JSON by convention).
type Command struct {
	Type    Type
	Version uint8
	Flags   Flags
	Payload []byte
}

// Encode returns the wire form: magic, type (big endian), version, flags,
// payload.
func (c Command) Encode() []byte {
	b := make([]byte, headerLen+len(c.Payload))
	b[0] = envelopeMagic
	binary.BigEndian.PutUint16(b[1:3], uint16(c.Type))
	b[3] = c.Version
	b[4] = byte(c.Flags)
	copy(b[headerLen:], c.Payload)
	return b
}

// ErrBadEnvelope is returned for bytes that are not a command envelope.
var ErrBadEnvelope = errors.New("fsm: malformed command envelope")

// Decode parses the wire form. The payload aliases b.
func Decode(b []byte) (Command, error) {
	if len(b) < headerLen || b[0] != envelopeMagic {
		return Command{}, fmt.Errorf("%w (%d bytes)", ErrBadEnvelope, len(b))
	}
	return Command{
		Type:    Type(binary.BigEndian.Uint16(b[1:3])),
		Version: b[3],
		Flags:   Flags(b[4]),
		Payload: b[headerLen:],
	}, nil
}
