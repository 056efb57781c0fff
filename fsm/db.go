package fsm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// driverName is a private registration of the SQLite driver so that our
// connection settings cannot collide with another user of "sqlite3".
const driverName = "svc_sqlite3"

// DriverName is the database/sql name of that driver, for a module that
// opens connections of its own to the replica's file (engine/sqlconsole)
// and needs the same SQL functions.
const DriverName = driverName

func init() {
	// database/sql's registry is global by design; registering once at init
	// is the only way to name a driver. Nothing else here is package state.
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: registerFunctions})
}

// dsn builds the connection string shared by the writer and the readers.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_sync", "NORMAL")
	q.Set("_busy_timeout", "5000")
	q.Set("_foreign_keys", "0")
	q.Set("_cache_size", "-16000")
	if readOnly {
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + url.PathEscape(path) + "?" + q.Encode()
}

// openReaders opens the pool of read-only connections. The writer must
// exist already (it creates the file and switches it to WAL).
func openReaders(path string) (*sql.DB, error) {
	reader, err := sql.Open(driverName, dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open readers: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxLifetime(0)
	reader.SetConnMaxIdleTime(0)
	if err := reader.PingContext(context.Background()); err != nil {
		reader.Close()
		return nil, fmt.Errorf("open readers: %w", err)
	}
	return reader, nil
}

// removeDBFiles deletes a database file with its WAL and shared-memory files.
func removeDBFiles(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
