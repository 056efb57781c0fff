// Package pbcompat serves PocketBase's HTTP API (the paths and shapes the
// official SDKs call) on top of svcd's engine: the same rules, the same
// Raft path as /api/v1, translated at the edge. It is a thin layer, not a
// second engine. api imports pbcompat; pbcompat never imports api.
//
// Conventions every route of the layer follows (docs/pocketbase.md):
//   - the caller comes from Authorization, a raw token or "Bearer <token>";
//     a bad or expired token makes the caller a guest (auth_mw.go);
//   - errors are PocketBase's envelope {status, message, data} (errors.go);
//   - records are PocketBase's JSON (shape.go), lists its
//     {items, page, perPage, totalItems, totalPages} (query.go);
//   - the setting pocketbase.enabled ("1" by default) turns every path of
//     the layer off (404) when "0", read on each request.
//
// Where each part plugs in: Mount (pbcompat.go) calls one registrar per
// part, each defined in the part's own file, so no part edits another's:
//
//	mountHealth       health.go        (part A)
//	mountRecords      records_crud.go  (part A)
//	mountCollections  collections.go   (part B)
//	mountAuth         auth.go          (part C)
//	mountRealtime     realtime.go      (part D)
//	mountFiles        files.go         (part E)
//	mountBatch        batch.go         (part E)
//
// Each registrar has the signature func(r chi.Router, d *Deps) and
// registers full paths (/api/...) on r; r already carries the gate and the
// compat authentication. The dependencies a part needs are fields of Deps
// whose interface types are declared in that part's file (CollectionAdmin
// in collections.go, UserAuth in auth.go, ...): a part narrows or widens
// its own interfaces without editing deps.go, as long as api's concrete
// values still satisfy them.
//
// Helpers the parts share (same package): d.Coll resolves a collection
// named in a path (aliases included), d.recordColl also checks an API
// token's scopes, d.recordCaller is the caller as record rules see it,
// d.recordBody reads a JSON record body with PocketBase's members
// translated, d.writeWritten / d.writeRecord answer a record in
// PocketBase's shape, WriteFailure maps a write's error, SetIndex sets
// X-Svc-Index. The multipart record bodies of part E plug in through
// d.createMultipart and d.updateMultipart (stubs in files.go).
package pbcompat
