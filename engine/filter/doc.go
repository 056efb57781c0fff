// Package filter owns the filter language of list filters, access rules
// and realtime subscription filters: the parser (to an AST), a compiler to
// parameterized SQL, and an in-memory evaluator of one record. It knows
// nothing of HTTP or of the engine's types: collections are described by
// Collection and Resolver, request values by Env.
//
// Semantics shared by both back ends (a differential test holds them to it):
//   - Values compare by SQLite storage class: NULL, numbers, text. A constant
//     takes the kind of the field it is compared with (a number field turns
//     "5" into 5 and a date field turns "2024-01-02" into unix seconds; a
//     text field turns 5 into "5"; booleans are 1 and 0).
//   - `=` and `!=` are NULL-safe (IS, IS NOT); `>`, `<`... are false when
//     either side is NULL.
//   - `~` is LIKE (ASCII case-insensitive): a value without % is matched
//     anywhere (its _ and % escaped); `!~` is its negation, true for NULL.
//   - A multi-valued left operand (a multiple field, a relation traversal, a
//     back-relation, @collection, or ?= on a JSON value): `?op` holds when
//     any element matches, `:each op` when every element matches and there is
//     at least one, and a plain op when every element matches (no elements
//     counts as one NULL).
//   - `:length` counts elements (or characters of text), `:lower` lowers
//     ASCII letters of text, `:isset` tells whether the request carried a key,
//     `:changed` whether the body changes a field's value.
//   - Datetime macros are computed from Env.Now in UTC; geoDistance and
//     strftime are Go functions registered in SQLite (fsm/functions.go) and
//     called directly in memory.
//
// Expressions that read other records (relations, back-relations,
// @collection) compile to SQL subqueries; Eval answers ErrNeedsDatabase.
//
// Errors say where: a SyntaxError carries the offset of the token at
// fault, and a CompileError (an expression that parses but does not apply
// to the collection) the offset of the operand or comparison, so a rule
// refused at save time and a dropped list filter can point at the mistake.
// To a caller who may not read a hidden field or another collection,
// naming one answers as naming one that does not exist.
package filter
