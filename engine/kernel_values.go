package engine

// Stored values as modules read them from rows (a row holds what SQLite
// returned: int64, float64, string, []byte or nil).

// AsString is a stored text or integer value as a string ("" otherwise).
func AsString(v any) string { return asString(v) }

// AsInt64 is a stored integer (or float) value as an int64 (0 otherwise).
func AsInt64(v any) int64 { return asInt64(v) }
