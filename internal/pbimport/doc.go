// Package pbimport reads a PocketBase data directory (pb_data) for
// `svcd import-pocketbase`: its collections as PocketBase stores them, the
// rows of each collection's table converted by field type, and where each
// stored file lives. It never writes to pb_data: the database is copied
// first (PocketBase may still be running) and the copy is opened
// read-only. Translating the schema and writing through the log are the
// importer's other steps.
package pbimport
