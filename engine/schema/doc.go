// Package schema owns collections and their typed fields: names, options, validation and the stored and JSON forms of every field value. It knows nothing of SQL connections or HTTP.
//
// Every field type lives in its own file (field_<type>.go) and implements
// FieldType. TypeOf maps a type name to its implementation with a switch
// rather than a registry, so there is no package state to initialise or to
// mutate at run time.
package schema
