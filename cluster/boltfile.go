package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
)

// The Raft log is a bbolt file, and bbolt trusts its file: it reads pages
// through unchecked pointers into a memory map, and on opening a file
// written without a synced freelist (NoFreelistSync) it walks the whole
// tree and panics, in a goroutine of its own where nothing can recover,
// on the first inconsistency. So before bbolt opens raft.db, boltFile
// reads it the way bbolt will, with plain reads and bounds checks, and
// refuses what bbolt could not read safely (boltwalk.go). It never writes.

// The on-disk format of bbolt 1.3 (go.etcd.io/bbolt: page.go, db.go).
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeader     = 16 // id u64, flags u16, count u16, overflow u32
	boltElementSize    = 16 // leaf: flags, pos, ksize, vsize (u32); branch: pos, ksize (u32), pgid (u64)
	boltMetaSize       = 64 // magic, version, page size, flags (u32); root, sequence, freelist, pgid, txid, checksum (u64)
	boltMetaSummed     = 56 // the checksum covers the meta up to itself
	boltBucketHeader   = 16 // root pgid u64, sequence u64
	boltNoFreelist     = ^uint64(0)
	boltBranchPage     = 0x01
	boltLeafPage       = 0x02
	boltFreelistPage   = 0x10
	boltBucketLeafFlag = 0x01
	boltMinPageSize    = 512
	boltMaxPageSize    = 1 << 16
)

// bbolt stores its structures in the machine's byte order.
var boltOrder = binary.NativeEndian

// boltMeta is one of the two meta pages.
type boltMeta struct {
	magic, version, pageSize uint32
	root                     uint64 // page of the root bucket
	freelist, pgid, txid     uint64
	checksum                 uint64
	sumOK                    bool
}

func parseBoltMeta(b []byte) boltMeta {
	m := b[boltPageHeader : boltPageHeader+boltMetaSize]
	h := fnv.New64a()
	h.Write(m[:boltMetaSummed])
	meta := boltMeta{
		magic:    boltOrder.Uint32(m[0:]),
		version:  boltOrder.Uint32(m[4:]),
		pageSize: boltOrder.Uint32(m[8:]),
		root:     boltOrder.Uint64(m[16:]),
		freelist: boltOrder.Uint64(m[32:]),
		pgid:     boltOrder.Uint64(m[40:]),
		txid:     boltOrder.Uint64(m[48:]),
		checksum: boltOrder.Uint64(m[56:]),
	}
	meta.sumOK = meta.checksum == 0 || meta.checksum == h.Sum64()
	return meta
}

// problem says why bbolt would refuse this meta page ("" if it accepts it).
func (m boltMeta) problem() string {
	switch {
	case m.magic != boltMagic:
		return "not a bbolt meta page (bad magic)"
	case m.version != boltVersion:
		return fmt.Sprintf("unknown bbolt version %d", m.version)
	case !m.sumOK:
		return "checksum mismatch"
	}
	return ""
}

// boltFile reads the pages of one bbolt file.
type boltFile struct {
	path     string
	f        *os.File
	size     int64
	pageSize int
	meta     boltMeta
}

// errBoltEmpty is a file bbolt has not initialised yet (zero length): it
// holds no state, and bbolt creates its structure on open.
var errBoltEmpty = errors.New("empty file")

// openBoltFile opens path read-only and picks the meta page bbolt would
// use: the valid one with the higher transaction id. A damaged meta page
// whose transaction id is the newer one is refused even when the other is
// valid: bbolt would silently fall back to the previous transaction, and
// for a Raft log that loses appended entries or a vote.
func openBoltFile(path string) (*boltFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	bf := &boltFile{path: path, f: f}
	if err := bf.readMetas(); err != nil {
		f.Close()
		return nil, err
	}
	return bf, nil
}

func (bf *boltFile) Close() error { return bf.f.Close() }

func (bf *boltFile) readMetas() error {
	fi, err := bf.f.Stat()
	if err != nil {
		return err
	}
	bf.size = fi.Size()
	if bf.size == 0 {
		return errBoltEmpty
	}
	// bbolt reads the page size from meta page 0, else assumes the OS
	// page size, and finds meta page 1 one page further.
	bf.pageSize = os.Getpagesize()
	first := make([]byte, boltPageHeader+boltMetaSize)
	if _, err := bf.f.ReadAt(first, 0); err != nil {
		return damagef("file too short for a meta page (%d bytes)", bf.size)
	}
	m0 := parseBoltMeta(first)
	if m0.problem() == "" {
		bf.pageSize = int(m0.pageSize)
	}
	if bf.pageSize < boltMinPageSize || bf.pageSize > boltMaxPageSize || bf.pageSize&(bf.pageSize-1) != 0 {
		return damagef("meta page 0 gives an impossible page size %d", bf.pageSize)
	}
	if bf.size < int64(2*bf.pageSize) {
		return damagef("file too short for two meta pages (%d bytes, page size %d)", bf.size, bf.pageSize)
	}
	second := make([]byte, boltPageHeader+boltMetaSize)
	if _, err := bf.f.ReadAt(second, int64(bf.pageSize)); err != nil {
		return fmt.Errorf("read meta page 1: %w", err)
	}
	m1 := parseBoltMeta(second)
	p0, p1 := m0.problem(), m1.problem()
	switch {
	case p0 != "" && p1 != "":
		return damagef("both meta pages are unreadable (page 0: %s; page 1: %s)", p0, p1)
	case p0 != "" && m0.txid == m1.txid+1:
		return damagef("meta page 0, the newest transaction's, is unreadable (%s)", p0)
	case p1 != "" && m1.txid == m0.txid+1:
		return damagef("meta page 1, the newest transaction's, is unreadable (%s)", p1)
	case p0 != "":
		bf.meta = m1
	case p1 != "":
		bf.meta = m0
	case m1.txid > m0.txid:
		bf.meta = m1
	default:
		bf.meta = m0
	}
	if int(bf.meta.pageSize) != bf.pageSize {
		return damagef("the meta page's page size %d differs from the file's %d", bf.meta.pageSize, bf.pageSize)
	}
	if bf.meta.pgid < 3 || bf.meta.pgid > uint64(bf.size)/uint64(bf.pageSize) {
		return damagef("the meta page's page count %d does not fit a file of %d pages", bf.meta.pgid, bf.size/int64(bf.pageSize))
	}
	return nil
}

// page is one page of the file with its overflow pages.
type boltPage struct {
	id       uint64
	flags    uint16
	count    int
	overflow uint32
	buf      []byte // the whole page, overflow included
}

// readPage reads page id, checking that it lies below the high-water mark
// and inside the file, and that its header names it.
func (bf *boltFile) readPage(id uint64) (*boltPage, error) {
	if id < 2 || id >= bf.meta.pgid {
		return nil, damagef("page %d referenced, outside the file's pages 2..%d", id, bf.meta.pgid-1)
	}
	hdr := make([]byte, boltPageHeader)
	if _, err := bf.f.ReadAt(hdr, int64(id)*int64(bf.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	p := &boltPage{
		id:       boltOrder.Uint64(hdr[0:]),
		flags:    boltOrder.Uint16(hdr[8:]),
		count:    int(boltOrder.Uint16(hdr[10:])),
		overflow: boltOrder.Uint32(hdr[12:]),
	}
	if p.id != id {
		return nil, damagef("page %d carries the id %d", id, p.id)
	}
	if uint64(p.overflow) >= bf.meta.pgid-id {
		return nil, damagef("page %d claims %d overflow pages, past the file's end", id, p.overflow)
	}
	n := (int64(p.overflow) + 1) * int64(bf.pageSize)
	p.buf = make([]byte, n)
	if _, err := bf.f.ReadAt(p.buf, int64(id)*int64(bf.pageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	return p, nil
}

// boltDamage is a structural problem of a bbolt file.
type boltDamage struct{ what string }

func (d *boltDamage) Error() string { return d.what }

func damagef(format string, args ...any) error {
	return &boltDamage{what: fmt.Sprintf(format, args...)}
}
