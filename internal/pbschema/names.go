package pbschema

import (
	"regexp"
	"strings"
)

// namePattern is svcd's shape of collection and field names.
var namePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`)

// reservedCollections are the API path segments svcd refuses as
// collection names (engine/collection_validate.go), compared without case.
var reservedCollections = []string{
	"admin", "auth", "files", "batch", "realtime", "mcp", "custom", "metrics",
	"notifications", "docs", "openapi.json", "flags", "_", "collections",
}

// reservedFieldNames are the record keys every svcd record has.
var reservedFieldNames = []string{"id", "created", "updated", "collectionId", "collectionName", "expand"}

// authSystemNames are the columns every svcd auth collection has.
var authSystemNames = []string{"email", "password", "email_verified", "is_anonymous", "password_reset_at"}

// pbSystemCollections are PocketBase's own collections, which are not
// translated as collections (the importer maps _superusers and
// _externalAuths itself).
var pbSystemCollections = []string{"_superusers", "_mfas", "_otps", "_externalAuths", "_authOrigins"}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// CollectionName returns the svcd name a PocketBase collection name gets:
// itself when svcd accepts it, else a name ending in "_pb" (invalid
// characters become "_", long names are cut). renamed reports a change.
func CollectionName(pbName string) (name string, renamed bool) {
	lower := strings.ToLower(pbName)
	ok := namePattern.MatchString(pbName) && !containsFold(reservedCollections, pbName) &&
		!strings.HasPrefix(lower, "_svc") && !strings.HasPrefix(lower, "svc_") && !strings.HasPrefix(lower, "sqlite_")
	if ok {
		return pbName, false
	}
	return suffixed(pbName), true
}

// suffixed makes a valid name ending in "_pb" out of any string.
func suffixed(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteString("c_")
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		out = "c"
	}
	lower := strings.ToLower(out)
	if strings.HasPrefix(lower, "_svc") || strings.HasPrefix(lower, "svc_") || strings.HasPrefix(lower, "sqlite_") {
		out = "pb" + out
	}
	if len(out) > 60 {
		out = out[:60]
	}
	return out + "_pb"
}

// fieldName returns the svcd name of a PocketBase field of a collection
// (auth tells whether it is an auth collection).
func fieldName(pbName string, auth bool) (name string, renamed bool) {
	if namePattern.MatchString(pbName) && !containsFold(reservedFieldNames, pbName) &&
		!(auth && containsFold(authSystemNames, pbName)) {
		return pbName, false
	}
	return suffixed(pbName), true
}
