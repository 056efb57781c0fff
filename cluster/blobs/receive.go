package blobs

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// receive writes exactly size bytes of r to key in dir through a
// temporary file, and keeps them only when their SHA-256 is want (hex; a
// fetch learns it after the bytes: then want is "" and check is called
// with the digest before the rename). The file is fsynced before the
// rename and the directory after, so a kept blob survives a crash.
func receive(dir, key string, size int64, r io.Reader, want string, check func(got string) error) error {
	if !validKey.MatchString(key) {
		return errBadKey
	}
	if size < 0 {
		return errors.New("blobs: negative size")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	// "<key>.<hex>.tmp": the collector sweeps one a crash abandoned.
	tmp := filepath.Join(dir, key+"."+hex.EncodeToString(suffix[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		if !kept {
			f.Close()
			os.Remove(tmp)
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("blobs: %s: stream ended after %d of %d bytes", key, n, size)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want != "" && got != want {
		return fmt.Errorf("blobs: %s: checksum mismatch", key)
	}
	if check != nil {
		if err := check(got); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
		return err
	}
	kept = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
