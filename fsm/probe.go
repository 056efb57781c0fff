package fsm

import (
	"context"
	"database/sql/driver"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// Column is one result column of a probed query.
type Column struct {
	Name     string
	DeclType string // the declared type of the source column, upper case; "" for expressions
}

// ProbeSelect checks that query is a single SELECT that runs on this
// replica, without running it: it is prepared as a subquery (so anything
// but one SELECT is a syntax error) on a read-only connection whose
// authorizer refuses every column read that deny reports (for example
// password hashes or internal tables). It returns the query's columns.
func (s *Store) ProbeSelect(ctx context.Context, query string, deny func(table, column string) bool) ([]Column, error) {
	var cols []Column
	err := s.View(ctx, func(r *Reader) error {
		conn, err := r.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*sqlite3.SQLiteConn)
			if !ok {
				return fmt.Errorf("fsm: unexpected driver connection %T", dc)
			}
			var denied string
			c.RegisterAuthorizer(func(op int, table, column, _ string) int {
				if op == sqlite3.SQLITE_READ && deny(table, column) {
					if denied == "" {
						denied = table + "." + column
					}
					return sqlite3.SQLITE_DENY
				}
				return sqlite3.SQLITE_OK
			})
			defer c.RegisterAuthorizer(nil)
			st, err := c.Prepare("SELECT * FROM (" + query + ") LIMIT 0")
			if denied != "" {
				if st != nil {
					st.Close()
				}
				return fmt.Errorf("reading %s is not allowed", denied)
			}
			if err != nil {
				return err
			}
			defer st.Close()
			rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, nil)
			if err != nil {
				return err
			}
			defer rows.Close()
			typed, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
			for i, name := range rows.Columns() {
				col := Column{Name: name}
				if typed != nil {
					col.DeclType = typed.ColumnTypeDatabaseTypeName(i)
				}
				cols = append(cols, col)
			}
			return nil
		})
	})
	return cols, err
}
