//go:build !sqlite_fts5

package search

// svcd's full-text search needs SQLite's FTS5, which mattn/go-sqlite3
// compiles in only under the sqlite_fts5 build tag. A build without it
// would answer 500 for every collection with a searchable field, so it is
// refused here, with the fix in the compiler's message:
//
//	make build
//	go build -tags sqlite_fts5 ./cmd/svcd
//
// cmd/svcd imports this package through its composition root
// (cmd/svcd/stack), so the binary cannot be built without the tag.
const _ = svcd_needs_the_build_tag_sqlite_fts5__run_make_build_or_go_build_tags_sqlite_fts5
