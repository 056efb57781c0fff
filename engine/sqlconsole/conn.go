package sqlconsole

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/engine"
	"svcd/fsm"
)

// Every run opens a connection of its own (cheap for SQLite: a file
// handle and a page cache) through the replica's driver, so the service's
// SQL functions exist there too, and installs the run's authorizer on it.
// Nothing a run does to its connection (temporary tables, PRAGMAs, an
// open transaction) outlives the run.

// readonlyDSN opens path read only, twice over: the file is opened
// read only and query_only refuses any write that got past the authorizer.
func readonlyDSN(path string) string {
	return "file:" + url.PathEscape(path) + "?mode=ro&_query_only=1&_busy_timeout=5000&_foreign_keys=0"
}

// sandboxDSN opens a sandbox copy for reading and writing.
func sandboxDSN(path string) string {
	return "file:" + url.PathEscape(path) + "?_busy_timeout=5000&_foreign_keys=0"
}

// withConn runs fn on a fresh connection to dsn whose authorizer is pol
// (nil: none, for the console's own work such as copying a sandbox).
// ATTACH is off on it whatever the policy says (SQLITE_LIMIT_ATTACHED 0),
// which also stops VACUUM INTO, which attaches its target.
func withConn(ctx context.Context, dsn string, pol *policy, fn func(c *sqlite3.SQLiteConn) error) error {
	db, err := sql.Open(fsm.DriverName, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("sqlconsole: driver connection is %T", dc)
		}
		if pol != nil {
			c.SetLimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
			c.RegisterAuthorizer(pol.authorize)
			defer c.RegisterAuthorizer(nil)
		}
		return fn(c)
	})
}

// tail is the text after the first statement SQLite prepared. The driver
// keeps it unexported (its own Exec runs it next); reading it is how one
// run stays one statement.
func tail(st *sqlite3.SQLiteStmt) string {
	f := reflect.ValueOf(st).Elem().FieldByName("t")
	if !f.IsValid() || f.Kind() != reflect.String {
		// A driver without the field: refuse rather than run what we
		// cannot see (TestTailIsVisible guards the driver upgrade).
		return "?"
	}
	return strings.Trim(f.String(), " \t\r\n;")
}

// secretColumns are the columns that read as NULL: every collection's
// password fields and private auth columns, and encrypted fields.
func secretColumns(core *engine.Engine) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, sc := range core.Schema().Collections() {
		ci := core.Coll(sc.ID)
		if ci == nil {
			continue
		}
		for _, f := range ci.RowFields() {
			if f.Private() || f.Encrypted {
				t := strings.ToLower(sc.Name)
				if out[t] == nil {
					out[t] = map[string]bool{}
				}
				out[t][strings.ToLower(f.Name)] = true
			}
		}
	}
	return out
}
