package fsm

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

// FileInfo is what InspectFile learns of a database file.
type FileInfo struct {
	// Meta is the file's _svc_meta table (applied_index, schema_version,
	// ...); nil when it has none, which makes it no replica of this
	// service.
	Meta map[string]int64
	// Tables names the file's tables.
	Tables map[string]bool
}

// ErrNotDatabase is a file SQLite cannot read as a database, or one that
// fails SQLite's integrity check.
var ErrNotDatabase = errors.New("fsm: not an intact SQLite database")

// InspectFile runs SQLite's full integrity check on the database file at
// path (opened read-only; it must not be in use) and reads its meta table
// and table names. A file that is no database, or fails the check, is
// ErrNotDatabase with SQLite's words.
func InspectFile(path string) (FileInfo, error) {
	db, done, err := openReadOnly(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer done()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return FileInfo{}, fmt.Errorf("%w: %v", ErrNotDatabase, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return FileInfo{}, fmt.Errorf("%w: %v", ErrNotDatabase, err)
		}
		if line != "ok" && len(problems) < 5 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return FileInfo{}, fmt.Errorf("%w: %v", ErrNotDatabase, err)
	}
	rows.Close()
	if len(problems) > 0 {
		return FileInfo{}, fmt.Errorf("%w: integrity_check: %s", ErrNotDatabase, strings.Join(problems, "; "))
	}
	info := FileInfo{Tables: map[string]bool{}}
	trows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		return FileInfo{}, fmt.Errorf("%w: %v", ErrNotDatabase, err)
	}
	for trows.Next() {
		var name string
		if err := trows.Scan(&name); err != nil {
			trows.Close()
			return FileInfo{}, err
		}
		info.Tables[name] = true
	}
	trows.Close()
	if !info.Tables["_svc_meta"] {
		return info, nil
	}
	info.Meta = map[string]int64{}
	mrows, err := db.Query(`SELECT k, v FROM _svc_meta`)
	if err != nil {
		return FileInfo{}, err
	}
	defer mrows.Close()
	for mrows.Next() {
		var k string
		var v int64
		if err := mrows.Scan(&k, &v); err != nil {
			return FileInfo{}, err
		}
		info.Meta[k] = v
	}
	return info, mrows.Err()
}

// ReceiveFile writes a database stream from r to a new file at path: a
// plain SQLite file, or a snapshot stream with its checksum trailer
// (Snapshot.WriteTo), whose trailer is verified and dropped. It reports
// whether the stream carried a checksum; on error the caller removes the
// file.
func ReceiveFile(path string, r io.Reader) (checked bool, err error) {
	return receiveSnapshot(path, r, nil)
}

// ReadMeta reads the _svc_meta table of the database file at path (opened
// read-only; no integrity check): nil when it has none.
func ReadMeta(path string) (map[string]int64, error) {
	db, done, err := openReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer done()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '_svc_meta'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotDatabase, err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := db.Query(`SELECT k, v FROM _svc_meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	meta := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	return meta, rows.Err()
}

// openReadOnly opens the database file at path read-only, on one
// connection. A file in WAL mode makes SQLite create its -wal and -shm
// files, which a read-only connection cannot remove: done closes the
// database and removes those it created.
func openReadOnly(path string) (db *sql.DB, done func(), err error) {
	var had [2]bool
	for i, suffix := range []string{"-wal", "-shm"} {
		_, err := os.Stat(path + suffix)
		had[i] = err == nil
	}
	db, err = sql.Open(driverName, "file:"+url.PathEscape(path)+"?mode=ro&_query_only=1")
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	return db, func() {
		db.Close()
		for i, suffix := range []string{"-wal", "-shm"} {
			if !had[i] {
				os.Remove(path + suffix)
			}
		}
	}, nil
}
