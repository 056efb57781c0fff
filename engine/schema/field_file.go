package schema

import (
	"fmt"
	"regexp"
	"strings"
)

var _ FieldType = fileType{}

// mimeType is what an entry of mimeTypes may be: type/subtype, lowercase,
// the subtype possibly "*".
var mimeType = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$`)

// fileUploadOnly is the message for any attempt to set a file field in a
// record body.
const fileUploadOnly = "file fields are set by uploading to /api/v1/files/:collection/:recordId/:field"

// fileType names uploaded files. Its value cannot be set in a record body:
// the files endpoints write it. Single: a file name stored as TEXT, output a
// string or null. Multiple: a compact JSON array of names, output an array
// ([] for null).
type fileType struct{}

func (fileType) Name() string { return FieldFile }

func (fileType) Column(*Field) Column { return ColText }

func (fileType) OptionKeys() []string {
	return []string{"multiple", "maxSize", "mimeTypes", "viewRule", "requireAuth", "protected", "oneTimeToken", "bindTokenIp", "auditDownloads"}
}

func (fileType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{
		Multiple:       o.Multiple,
		FileMaxSize:    o.FileMaxSize,
		FileViewRule:   o.FileViewRule,
		RequireAuth:    o.RequireAuth,
		Protected:      o.Protected,
		OneTimeToken:   o.OneTimeToken,
		BindTokenIP:    o.BindTokenIP,
		AuditDownloads: o.AuditDownloads,
	}
	if o.FileMaxSize < 0 {
		return "maxSize cannot be negative"
	}
	if len(o.MimeTypes) > 0 {
		list := make([]string, 0, len(o.MimeTypes))
		for _, m := range o.MimeTypes {
			m = strings.ToLower(strings.TrimSpace(m))
			if !mimeType.MatchString(m) {
				return fmt.Sprintf("mimeTypes: %q is not a type/subtype", m)
			}
			list = append(list, m)
		}
		f.MimeTypes = dedupe(list)
	}
	return ""
}

func (fileType) Normalize(_ *Field, in any) (any, string) {
	if in != nil {
		return nil, fileUploadOnly
	}
	return nil, ""
}

func (fileType) IsZero(f *Field, stored any) bool {
	if f.Multiple {
		return isZeroList(stored)
	}
	return isZeroText(stored)
}

func (fileType) AppendJSON(buf []byte, f *Field, stored any) []byte {
	if f.Multiple {
		return appendStringList(buf, storedStringList(stored))
	}
	if isZeroText(stored) {
		return append(buf, "null"...)
	}
	return appendStoredText(buf, stored)
}
