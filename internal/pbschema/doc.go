// Package pbschema translates PocketBase (0.23+) collection definitions to
// svcd's and back, and rewrites PocketBase rules and filters into svcd's
// filter language.
//
// It is pure: it imports nothing of svcd (internal/ packages are leaves),
// so its svcd side is the JSON shape of the admin collections API
// (docs/api.md "Collections"), not engine/schema's types. What cannot be
// translated is never dropped silently: every loss is a Problem.
//
// The compat collections routes (api/pbcompat) and the importer
// (svcd import-pocketbase) share Translate, RewriteRule and Reverse.
package pbschema
