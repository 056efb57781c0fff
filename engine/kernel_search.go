package engine

// Kernel exports for a search provider (list_extension.go): the read a
// list runs in, and the SQL names of a collection's table and fields for
// the index tables and conditions it builds.

// ListRead is the read a record list runs in, as its search provider
// sees it: the replica's committed state, or the apply transaction of a
// batch.
type ListRead struct {
	src *readSource
}

// Rows are the rows a ListRead query answers.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Close() error
	Err() error
}

// Bypass reports whether the reader acts as an admin on ci: no rules, and
// hidden fields shown (and searched).
func (l *ListRead) Bypass(ci *Coll) bool { return l.src.bypass(ci) }

// Query runs a statement that is not kept prepared (its text varies with
// the query). On the replica the rows are *sql.Rows.
func (l *ListRead) Query(q string, args ...any) (Rows, error) { return l.src.query(false, q, args...) }

// QueryRow runs a statement answering one row.
func (l *ListRead) QueryRow(q string, args ...any) interface{ Scan(dest ...any) error } {
	return l.src.queryRow(q, args...)
}

// Column is the quoted name of the field's column in its collection's
// table.
func (f *FieldInfo) Column() string { return f.col }
