package pbimport

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Unpack extracts a pb_data directory packed with `tar czf x.tar.gz
// pb_data` into dir and answers the pb_data path inside it. Entries that
// would land outside dir, links and devices are refused.
func Unpack(tarGz, dir string) (string, error) {
	f, err := os.Open(tarGz)
	if err != nil {
		return "", err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tarGz, err)
	}
	tr := tar.NewReader(gz)
	root := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", tarGz, err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if filepath.IsAbs(h.Name) || strings.Contains(h.Name, "..") || !strings.HasPrefix(p, filepath.Clean(dir)+string(os.PathSeparator)) {
			return "", fmt.Errorf("%s: entry %q leaves the directory", tarGz, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = writeFrom(p, tr)
			}
			if filepath.Base(p) == "data.db" {
				root = filepath.Dir(p)
			}
		default:
			err = fmt.Errorf("%s: entry %q is not a file or a directory", tarGz, h.Name)
		}
		if err != nil {
			return "", err
		}
	}
	if root == "" {
		return "", fmt.Errorf("%s holds no data.db", tarGz)
	}
	return root, nil
}

func writeFrom(path string, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
