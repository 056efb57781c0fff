package main

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// checkDatabaseFile runs SQLite's integrity check on a stopped node's
// database at path, read-only, and returns the index it has applied. A
// missing file is os.ErrNotExist.
func checkDatabaseFile(path string) (applied uint64, err error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite3", "file:"+url.PathEscape(path)+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check(20)")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	rows.Close()
	if len(problems) > 0 {
		return 0, fmt.Errorf("%s: integrity_check: %s", path, strings.Join(problems, "; "))
	}
	err = db.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'applied_index'`).Scan(&applied)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%s: applied index: %w", path, err)
	}
	return applied, nil
}
