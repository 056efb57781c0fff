package engine

// The core's services. Engine is the kernel: the registries, the command
// path (Propose), the caches of the committed schema and settings, the
// read sources. Its two services hold the operations on app data and are
// what the HTTP layer and the modules call:
//
//   - Records: reading and writing records (lists, expansions, batches,
//     the record commands and their apply handlers);
//   - Schema: the collections, their fields, views and indexes (the DDL
//     commands and their apply handlers).

// Records reads and writes the records of every collection, under the
// caller's rights.
type Records struct {
	e   *Engine
	ids *recordIDs
}

// Schema creates, changes and drops collections and their indexes.
type Schema struct{ e *Engine }

// Records is the engine's record service.
func (e *Engine) Records() *Records { return e.recs }

// Schema is the engine's collection service.
func (e *Engine) Schema() *Schema { return e.ddl }
