package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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

// The envelope's first byte is its format. Version 1 (0xC1) is magic,
// type (big endian), version, flags, payload. Version 2 (0xC2) adds a
// CRC-32C (Castagnoli) of everything after the magic, so a changed byte
// anywhere in an entry, on disk or in transit, is refused before it is
// applied instead of changing a record silently. Encode writes version 2;
// Decode reads both (logs written before version 2 carry no checksum).
const (
	envelopeMagic   byte = 0xC1
	envelopeMagicV2 byte = 0xC2
)

const (
	headerLen   = 5
	headerLenV2 = 9
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Command is the unit proposed to the log: a type, the version of that
// type's payload schema, flags and an opaque payload (JSON by convention).
type Command struct {
	Type    Type
	Version uint8
	Flags   Flags
	Payload []byte
}

// Encode returns the wire form: magic (version 2), type (big endian),
// version, flags, the CRC-32C of what follows the magic but for the
// checksum itself, payload.
func (c Command) Encode() []byte {
	b := make([]byte, headerLenV2+len(c.Payload))
	b[0] = envelopeMagicV2
	binary.BigEndian.PutUint16(b[1:3], uint16(c.Type))
	b[3] = c.Version
	b[4] = byte(c.Flags)
	copy(b[headerLenV2:], c.Payload)
	binary.BigEndian.PutUint32(b[5:9], envelopeSum(b))
	return b
}

// envelopeSum is the checksum of a version 2 envelope b.
func envelopeSum(b []byte) uint32 {
	sum := crc32.Update(0, castagnoli, b[1:5])
	return crc32.Update(sum, castagnoli, b[headerLenV2:])
}

// ErrBadEnvelope is returned for bytes that are not a command envelope.
var ErrBadEnvelope = errors.New("fsm: malformed command envelope")

// ErrChecksum is returned for a version 2 envelope whose bytes do not
// match its checksum: the entry was damaged after it was written.
var ErrChecksum = errors.New("fsm: command envelope fails its checksum")

// Decode parses the wire form (version 1 or 2), verifying a version 2
// envelope's checksum. The payload aliases b.
func Decode(b []byte) (Command, error) {
	switch {
	case len(b) >= headerLen && b[0] == envelopeMagic:
		return Command{Type: Type(binary.BigEndian.Uint16(b[1:3])), Version: b[3], Flags: Flags(b[4]), Payload: b[headerLen:]}, nil
	case len(b) >= headerLenV2 && b[0] == envelopeMagicV2:
		if got, want := envelopeSum(b), binary.BigEndian.Uint32(b[5:9]); got != want {
			return Command{}, fmt.Errorf("%w (%d bytes: CRC-32C %08x, recorded %08x)", ErrChecksum, len(b), got, want)
		}
		return Command{Type: Type(binary.BigEndian.Uint16(b[1:3])), Version: b[3], Flags: Flags(b[4]), Payload: b[headerLenV2:]}, nil
	}
	return Command{}, fmt.Errorf("%w (%d bytes)", ErrBadEnvelope, len(b))
}
