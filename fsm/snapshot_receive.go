package fsm

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"os"

	"svcd/internal/progress"
)

// snapshotReceiver passes the database bytes of a snapshot stream on to
// dst while hashing them, and holds back the stream's last
// snapshotTrailerSize bytes (its trailer, if it has one) until the stream
// ends. Memory use does not depend on the snapshot's size.
type snapshotReceiver struct {
	dst  io.Writer
	hash hash.Hash
	n    uint64 // bytes passed on to dst
	tail []byte // the last bytes received, at most snapshotTrailerSize
	// prog, when set, counts the bytes passed on; its total is the
	// database's size as its header says (sqliteHeaderSize).
	prog *progress.Reporter
	head []byte // the first bytes passed on, until the header is read
}

func newSnapshotReceiver(dst io.Writer) *snapshotReceiver {
	return &snapshotReceiver{dst: dst, hash: sha256.New(), tail: make([]byte, 0, snapshotTrailerSize)}
}

// Write receives the next bytes of the stream.
func (r *snapshotReceiver) Write(p []byte) (int, error) {
	n := len(p)
	if over := len(r.tail) + len(p) - snapshotTrailerSize; over > 0 {
		// The oldest bytes held back cannot be the trailer any more.
		fromTail := min(over, len(r.tail))
		if err := r.pass(r.tail[:fromTail]); err != nil {
			return 0, err
		}
		r.tail = append(r.tail[:0], r.tail[fromTail:]...)
		if err := r.pass(p[:over-fromTail]); err != nil {
			return 0, err
		}
		p = p[over-fromTail:]
	}
	r.tail = append(r.tail, p...)
	return n, nil
}

func (r *snapshotReceiver) pass(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := r.dst.Write(b); err != nil {
		return err
	}
	r.hash.Write(b)
	r.n += uint64(len(b))
	if r.prog != nil {
		if r.head != nil {
			r.head = append(r.head, b[:min(len(b), sqliteHeaderLen-len(r.head))]...)
			if len(r.head) == sqliteHeaderLen {
				if size, ok := sqliteHeaderSize(r.head); ok {
					r.prog.SetTotalBytes(size)
				}
				r.head = nil
			}
		}
		r.prog.AddBytes(int64(len(b)))
	}
	return nil
}

// sqliteHeaderLen is the length of an SQLite database file's header.
const sqliteHeaderLen = 100

// sqliteHeaderSize is the size of the database file whose header is h:
// its page size (offset 16) times its page count (offset 28). The count
// is valid only when the header says so (the change counter at offset 24
// equals the version-valid-for number at offset 92), as in a file the
// online backup writes; ok is false otherwise.
func sqliteHeaderSize(h []byte) (size int64, ok bool) {
	if len(h) < sqliteHeaderLen || string(h[:16]) != "SQLite format 3\x00" {
		return 0, false
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if pageSize < sqliteMinPageSize || pages == 0 || binary.BigEndian.Uint32(h[24:28]) != binary.BigEndian.Uint32(h[92:96]) {
		return 0, false
	}
	return pageSize * pages, true
}

// finish ends the stream. A stream of whole pages is a plain database file
// (snapshot_trailer.go): the bytes held back are its end and are passed
// on. Any other stream must end with a trailer that matches the bytes
// passed on. It reports whether the stream carried a checksum.
func (r *snapshotReceiver) finish() (checked bool, err error) {
	total := r.n + uint64(len(r.tail))
	if total%sqliteMinPageSize == 0 {
		if err := r.pass(r.tail); err != nil {
			return false, err
		}
		r.tail = r.tail[:0]
		return false, nil
	}
	t, err := decodeSnapshotTrailer(r.tail, total)
	if err != nil {
		return false, err
	}
	if err := t.verify(r.n, r.hash.Sum(nil)); err != nil {
		return false, err
	}
	return true, nil
}

// receiveSnapshot writes the database bytes of the snapshot stream r to a
// new file at path, verifies the stream's checksum trailer if it has one,
// and syncs the file. It reports whether the stream carried a checksum.
// On error the caller removes the file. prog (nil: none) counts the
// database bytes received.
func receiveSnapshot(path string, r io.Reader, prog *progress.Reporter) (checked bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	buf := bufio.NewWriterSize(f, 64<<10)
	recv := newSnapshotReceiver(buf)
	if prog != nil {
		recv.prog, recv.head = prog, make([]byte, 0, sqliteHeaderLen)
	}
	if _, err := io.Copy(recv, r); err != nil {
		return false, err
	}
	if checked, err = recv.finish(); err != nil {
		return false, err
	}
	if err := buf.Flush(); err != nil {
		return false, err
	}
	return checked, f.Sync()
}
