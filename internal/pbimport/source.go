package pbimport

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver
)

// Source is an open pb_data directory.
type Source struct {
	dir string // the pb_data directory
	tmp string // the copy of its database
	db  *sql.DB
}

// Open copies dir's data.db (with its WAL, when there is one) to a
// temporary directory and opens the copy read-only.
func Open(dir string) (*Source, error) {
	db := filepath.Join(dir, "data.db")
	if _, err := os.Stat(db); err != nil {
		return nil, fmt.Errorf("%s is not a PocketBase data directory: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "svcd-pbimport-")
	if err != nil {
		return nil, err
	}
	for _, suffix := range []string{"", "-wal"} {
		err := copyFile(db+suffix, filepath.Join(tmp, "data.db"+suffix))
		if err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	conn, err := sql.Open("sqlite3", "file:"+filepath.Join(tmp, "data.db")+"?mode=ro&_query_only=1")
	if err == nil {
		err = conn.Ping()
	}
	if err == nil {
		var n int
		err = conn.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_collections'`).Scan(&n)
		if err == nil && n == 0 {
			err = fmt.Errorf("%s has no _collections table: not a PocketBase 0.23+ database", db)
		}
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Source{dir: dir, tmp: tmp, db: conn}, nil
}

// Close closes the copy and removes it.
func (s *Source) Close() error {
	err := s.db.Close()
	if rerr := os.RemoveAll(s.tmp); err == nil {
		err = rerr
	}
	return err
}

// FilePath is where PocketBase's local storage keeps a record's file:
// storage/<collection id>/<record id>/<name>.
func (s *Source) FilePath(c *Collection, recordID, name string) string {
	return filepath.Join(s.dir, "storage", c.ID, recordID, name)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
