package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MountTmpfs mounts a tmpfs of size bytes at dir (created if needed): a
// node's data directory on a disk the test can fill. It needs root. The
// returned function unmounts it (lazily: a process may still hold files).
func MountTmpfs(dir string, size int64) (unmount func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount tmpfs at %s: %v: %s", dir, err, out)
	}
	return func() { exec.Command("umount", "-l", dir).Run() }, nil
}

// FillerName is the file a Filler grows in a data directory.
const FillerName = "disk-filler"

// Filler takes the free space of the file system of a directory away, and
// gives it back.
type Filler struct{ path string }

// NewFiller returns the filler of dir's file system.
func NewFiller(dir string) *Filler { return &Filler{path: filepath.Join(dir, FillerName)} }

// Leave grows (or shrinks) the filler until about keep bytes are free. The
// space is allocated for real (a sparse file takes none on tmpfs); when the
// last pages do not fit, it fills what does.
func (f *Filler) Leave(keep int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(f.path), &st); err != nil {
		return err
	}
	free := int64(st.Bavail) * st.Bsize
	cur := int64(0)
	if fi, err := os.Stat(f.path); err == nil {
		cur = fi.Size()
	}
	want := max(cur+free-keep, 0)
	file, err := os.OpenFile(f.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer file.Close()
	if want < cur {
		return file.Truncate(want)
	}
	// Grow in chunks, halving one that does not fit: a failed fallocate on
	// tmpfs allocates and frees the whole chunk, so retrying the full size
	// in small steps while the node writes would take minutes.
	chunk := int64(64 << 20)
	for cur < want && chunk >= 4<<10 {
		n := min(chunk, want-cur)
		if unix.Fallocate(int(file.Fd()), 0, cur, n) == nil {
			cur += n
			continue
		}
		chunk /= 2
	}
	return nil
}

// Free gives the space back.
func (f *Filler) Free() error {
	if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
