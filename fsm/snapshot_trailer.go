package fsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// A snapshot stream is the SQLite database file followed by a fixed trailer
// that carries an end-to-end checksum of the database bytes. Raft's file
// snapshot store keeps a CRC of what it stored, but a snapshot also travels
// from the leader to a follower (InstallSnapshot) and may be uploaded as a
// backup; a damaged value inside a page passes SQLite's quick_check. The
// trailer is computed by Snapshot.WriteTo from the bytes it sends and
// checked by Restore before anything is swapped in.
//
// Trailer layout (snapshotTrailerSize bytes, integers big-endian):
//
//	offset  size  field
//	0       8     magic "SVCDSNAP"
//	8       4     trailer version (1)
//	12      8     length of the database bytes before the trailer
//	20      32    SHA-256 of the database bytes
//
// A stream that is a whole number of 512-byte pages is a plain SQLite
// file without the trailer: a snapshot written by an older binary, or a
// backup uploaded as a plain database file. It is accepted as before,
// checked by SQLite alone (Restore logs that it carried no checksum). Every
// SQLite page size is a multiple of 512, so a database file always is such
// a stream, and a stream with the trailer never is (it ends 52 bytes past a
// page boundary): damage to the trailer, its magic included, cannot pass it
// off as a plain file, and user data that happens to end a plain file with
// the magic cannot pass it off as a trailer.
const (
	snapshotTrailerMagic   = "SVCDSNAP"
	snapshotTrailerVersion = 1
	snapshotTrailerSize    = 8 + 4 + 8 + 32
	// sqliteMinPageSize divides every SQLite page size: a database file
	// is a whole number of such blocks.
	sqliteMinPageSize = 512
)

// ErrSnapshotDamaged is wrapped by Restore's error when the stream fails
// its checksum trailer (or, without one, cannot be a whole database file).
// Nothing was swapped in: the live database is unchanged.
var ErrSnapshotDamaged = errors.New("snapshot damaged")

// snapshotTrailer is the decoded trailer.
type snapshotTrailer struct {
	length uint64
	sum    [32]byte
}

// encode returns the trailer's bytes.
func (t snapshotTrailer) encode() []byte {
	b := make([]byte, 0, snapshotTrailerSize)
	b = append(b, snapshotTrailerMagic...)
	b = binary.BigEndian.AppendUint32(b, snapshotTrailerVersion)
	b = binary.BigEndian.AppendUint64(b, t.length)
	return append(b, t.sum[:]...)
}

// decodeSnapshotTrailer decodes b, the last bytes of a stream of total
// bytes that is not a whole number of pages.
func decodeSnapshotTrailer(b []byte, total uint64) (snapshotTrailer, error) {
	var t snapshotTrailer
	if len(b) != snapshotTrailerSize || !bytes.HasPrefix(b, []byte(snapshotTrailerMagic)) {
		return t, fmt.Errorf("%w: the %d-byte stream neither ends with a checksum trailer nor is a whole number of %d-byte pages (truncated, or its trailer is damaged)",
			ErrSnapshotDamaged, total, sqliteMinPageSize)
	}
	if v := binary.BigEndian.Uint32(b[8:12]); v != snapshotTrailerVersion {
		return t, fmt.Errorf("%w: unknown checksum trailer version %d", ErrSnapshotDamaged, v)
	}
	t.length = binary.BigEndian.Uint64(b[12:20])
	copy(t.sum[:], b[20:])
	return t, nil
}

// verify compares the trailer with the database bytes received: their
// length and their SHA-256.
func (t snapshotTrailer) verify(length uint64, sum []byte) error {
	if t.length != length {
		return fmt.Errorf("%w: length mismatch: the trailer says %d database bytes, the stream has %d",
			ErrSnapshotDamaged, t.length, length)
	}
	if !bytes.Equal(t.sum[:], sum) {
		return fmt.Errorf("%w: checksum mismatch: the database bytes hash to sha256 %x, the trailer says %x",
			ErrSnapshotDamaged, sum, t.sum[:])
	}
	return nil
}
