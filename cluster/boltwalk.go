package cluster

import (
	"bytes"
	"fmt"

	"svcd/internal/progress"
)

// boltWalk visits the buckets of a boltFile in key order and checks, page
// by page, everything bbolt relies on when it reads them: every page is
// reached once (no cycle, no page shared by two parents, so the walk ends),
// lies inside the file, is a branch or a leaf page, holds its elements
// and their keys and values inside its bytes, and keys increase. A nested
// bucket's header and inline page are checked the same way.
type boltWalk struct {
	bf   *boltFile
	seen map[uint64]bool
	prog *progress.Reporter // counts the bytes of the pages read (nil: none)
}

// boltMaxDepth bounds the depth of a bucket's tree; bbolt's are a few
// levels deep.
const boltMaxDepth = 64

// leafFunc receives each key and value of a bucket in key order; flags are
// the element's (boltBucketLeafFlag for a nested bucket). The slices are
// valid for the whole walk.
type leafFunc func(key, value []byte, flags uint32) error

// walkBucket walks the bucket whose leaf value (header and, for an inline
// bucket, its page) is value.
func (w *boltWalk) walkBucket(value []byte, fn leafFunc) error {
	if len(value) < boltBucketHeader {
		return damagef("a bucket header of %d bytes", len(value))
	}
	var last []byte
	root := boltOrder.Uint64(value[0:])
	if root != 0 {
		return w.walkPage(root, 0, &last, fn)
	}
	inline := value[boltBucketHeader:]
	if len(inline) < boltPageHeader {
		return damagef("an inline bucket of %d bytes", len(value))
	}
	if flags := boltOrder.Uint16(inline[8:]); flags != boltLeafPage {
		return damagef("an inline bucket whose page has type %#x", flags)
	}
	return leafElements(inline, int(boltOrder.Uint16(inline[10:])), &last, fn, "an inline bucket")
}

// walkPage walks the subtree at page id; last is the previous key.
func (w *boltWalk) walkPage(id uint64, depth int, last *[]byte, fn leafFunc) error {
	if depth > boltMaxDepth {
		return damagef("page %d lies %d levels deep", id, depth)
	}
	if w.seen[id] {
		return damagef("page %d is referenced twice", id)
	}
	p, err := w.bf.readPage(id)
	if err != nil {
		return err
	}
	w.prog.AddBytes(int64(len(p.buf)))
	for i := uint64(0); i <= uint64(p.overflow); i++ {
		if w.seen[id+i] {
			return damagef("page %d overlaps page %d", id, id+i)
		}
		w.seen[id+i] = true
	}
	where := fmt.Sprintf("page %d", id)
	switch p.flags {
	case boltLeafPage:
		return leafElements(p.buf, p.count, last, fn, where)
	case boltBranchPage:
		if p.count == 0 {
			return damagef("%s: a branch page without elements", where)
		}
		if boltPageHeader+p.count*boltElementSize > len(p.buf) {
			return damagef("%s: %d elements overflow the page", where, p.count)
		}
		for i := range p.count {
			off := boltPageHeader + i*boltElementSize
			pos, ksize := uint64(boltOrder.Uint32(p.buf[off:])), uint64(boltOrder.Uint32(p.buf[off+4:]))
			if uint64(off)+pos+ksize > uint64(len(p.buf)) || ksize == 0 {
				return damagef("%s: element %d's key lies outside the page", where, i)
			}
			if err := w.walkPage(boltOrder.Uint64(p.buf[off+8:]), depth+1, last, fn); err != nil {
				return err
			}
		}
		return nil
	}
	return damagef("%s has type %#x, not a branch or a leaf page", where, p.flags)
}

// leafElements checks and visits the count elements of the leaf page in
// buf.
func leafElements(buf []byte, count int, last *[]byte, fn leafFunc, where string) error {
	if boltPageHeader+count*boltElementSize > len(buf) {
		return damagef("%s: %d elements overflow the page", where, count)
	}
	for i := range count {
		off := boltPageHeader + i*boltElementSize
		flags := boltOrder.Uint32(buf[off:])
		pos := uint64(boltOrder.Uint32(buf[off+4:]))
		ksize := uint64(boltOrder.Uint32(buf[off+8:]))
		vsize := uint64(boltOrder.Uint32(buf[off+12:]))
		start := uint64(off) + pos
		if start+ksize+vsize > uint64(len(buf)) {
			return damagef("%s: element %d lies outside the page", where, i)
		}
		if flags&^boltBucketLeafFlag != 0 {
			return damagef("%s: element %d has unknown flags %#x", where, i, flags)
		}
		key, value := buf[start:start+ksize], buf[start+ksize:start+ksize+vsize]
		if len(key) == 0 {
			return damagef("%s: element %d has an empty key", where, i)
		}
		if len(*last) > 0 && bytes.Compare(key, *last) <= 0 {
			return damagef("%s: element %d's key is out of order", where, i)
		}
		*last = key
		if err := fn(key, value, flags); err != nil {
			return err
		}
	}
	return nil
}

// walkNested checks a bucket of unknown content and its nested buckets.
func (w *boltWalk) walkNested(value []byte, depth int) error {
	if depth > boltMaxDepth {
		return damagef("buckets nested %d deep", depth)
	}
	return w.walkBucket(value, func(_, v []byte, flags uint32) error {
		if flags&boltBucketLeafFlag != 0 {
			return w.walkNested(v, depth+1)
		}
		return nil
	})
}

// checkFreelist checks a freelist page (a file last written with the
// freelist synced, such as a compacted copy): bbolt allocates from it, so
// every page it names must exist and be unreachable from the tree.
func (w *boltWalk) checkFreelist() error {
	id := w.bf.meta.freelist
	if id == boltNoFreelist {
		return nil
	}
	if w.seen[id] {
		return damagef("the freelist page %d is also part of the tree", id)
	}
	p, err := w.bf.readPage(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if p.flags&boltFreelistPage == 0 {
		return damagef("freelist page %d has type %#x", id, p.flags)
	}
	start, count := boltPageHeader, uint64(p.count)
	if p.count == 0xFFFF {
		if len(p.buf) < boltPageHeader+8 {
			return damagef("freelist page %d is too short", id)
		}
		count, start = boltOrder.Uint64(p.buf[boltPageHeader:]), boltPageHeader+8
	}
	if count > uint64(len(p.buf)-start)/8 {
		return damagef("freelist page %d lists %d pages, more than it holds", id, count)
	}
	free := make(map[uint64]bool, count)
	for i := range count {
		f := boltOrder.Uint64(p.buf[start+int(i)*8:])
		switch {
		case f < 2 || f >= w.bf.meta.pgid:
			return damagef("freelist page %d lists page %d, outside the file", id, f)
		case w.seen[f] || (f >= id && f <= id+uint64(p.overflow)):
			return damagef("freelist page %d lists page %d, which is in use", id, f)
		case free[f]:
			return damagef("freelist page %d lists page %d twice", id, f)
		}
		free[f] = true
	}
	return nil
}
