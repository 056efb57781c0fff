package pbschema

import (
	"fmt"
	"sort"
)

// Stored is a svcd collection as the admin API answers it: the
// definition plus its id and times (unix seconds).
type Stored struct {
	ID string `json:"id"`
	Collection
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// SuperusersID is the id PocketBase gives _superusers, which the JS SDK
// falls back on to tell a superuser token.
const SuperusersID = "pbc_3142635823"

// Reverse builds the PocketBase JSON of a svcd collection (the answer of
// PocketBase's GET /api/collections/{c}). indexes are the collection's
// svcd indexes (unique fields are added from the fields themselves). The
// answer carries every member PocketBase's Collection.MarshalJSON has for
// the type, with listRule = viewRule = view_rule.
func Reverse(s Stored, indexes []Index) map[string]any {
	out := map[string]any{
		"id": s.ID, "name": s.Name, "type": s.Type, "system": false,
		"listRule": s.ViewRule, "viewRule": s.ViewRule,
		"createRule": s.CreateRule, "updateRule": s.UpdateRule, "deleteRule": s.DeleteRule,
		"created": FormatDate(s.Created), "updated": FormatDate(s.Updated),
	}
	fields := []map[string]any{pbField(map[string]any{
		"id": "text3208210256", "name": "id", "type": "text", "system": true, "required": true,
		"primaryKey": true, "min": 15, "max": 15, "pattern": "^[a-z0-9]+$", "autogeneratePattern": "[a-z0-9]{15}",
	})}
	if s.Type == "auth" {
		fields = append(fields,
			pbField(map[string]any{"id": "password901924565", "name": "password", "type": "password", "system": true, "hidden": true, "required": true, "min": 8}),
			pbField(map[string]any{"id": "text2504183744", "name": "tokenKey", "type": "text", "system": true, "hidden": true, "required": true, "min": 30, "max": 60, "autogeneratePattern": "[a-zA-Z0-9]{50}"}),
			pbField(map[string]any{"id": "email3885137012", "name": "email", "type": "email", "system": true, "required": true}),
			pbField(map[string]any{"id": "bool1547992806", "name": "emailVisibility", "type": "bool", "system": true}),
			pbField(map[string]any{"id": "bool256245529", "name": "verified", "type": "bool", "system": true}),
		)
	}
	var idx []string
	for _, f := range s.Fields {
		if s.Type == "auth" && f.Name() == "emailVisibility" {
			continue // listed above as PocketBase's system field
		}
		fields = append(fields, reverseField(f))
		if u, _ := f["unique"].(bool); u {
			idx = append(idx, indexSQLFor(s.Name, f.Name(), true))
		}
	}
	for _, ix := range indexes {
		if !ix.Unique {
			idx = append(idx, indexSQLFor(s.Name, ix.Field, false))
		}
	}
	if s.Type == "auth" {
		idx = append(idx,
			fmt.Sprintf("CREATE UNIQUE INDEX `idx_tokenKey_%s` ON `%s` (`tokenKey`)", s.ID, s.Name),
			fmt.Sprintf("CREATE UNIQUE INDEX `idx_email_%s` ON `%s` (`email`) WHERE `email` != ''", s.ID, s.Name))
	}
	sort.Strings(idx)
	fields = append(fields,
		pbField(map[string]any{"id": "autodate2990389176", "name": "created", "type": "autodate", "system": true, "onCreate": true}),
		pbField(map[string]any{"id": "autodate3332085495", "name": "updated", "type": "autodate", "system": true, "onCreate": true, "onUpdate": true}),
	)
	out["fields"] = fields
	if idx == nil {
		idx = []string{}
	}
	out["indexes"] = idx
	switch s.Type {
	case "view":
		out["viewQuery"] = s.ViewQuery
	case "auth":
		addAuthOptions(out, s.AuthOptions)
	}
	return out
}

func indexSQLFor(coll, field string, unique bool) string {
	if unique {
		return fmt.Sprintf("CREATE UNIQUE INDEX `uniq_%s_%s` ON `%s` (`%s`)", coll, field, coll, field)
	}
	return fmt.Sprintf("CREATE INDEX `idx_%s_%s` ON `%s` (`%s`)", coll, field, coll, field)
}

// typeKeys are the option members PocketBase's field types marshal
// (pb:core/field_*.go), with their zero values.
var typeKeys = map[string]map[string]any{
	"text":     {"min": 0, "max": 0, "pattern": "", "autogeneratePattern": "", "primaryKey": false, "required": false},
	"number":   {"min": nil, "max": nil, "onlyInt": false, "required": false},
	"bool":     {"required": false},
	"email":    {"exceptDomains": nil, "onlyDomains": nil, "required": false},
	"url":      {"exceptDomains": nil, "onlyDomains": nil, "required": false},
	"editor":   {"maxSize": 0, "convertURLs": false, "required": false},
	"date":     {"min": "", "max": "", "required": false},
	"autodate": {"onCreate": false, "onUpdate": false},
	"select":   {"values": []string{}, "maxSelect": 0, "required": false},
	"file":     {"maxSize": 0, "maxSelect": 0, "mimeTypes": []string{}, "thumbs": []string{}, "protected": false, "required": false},
	"relation": {"collectionId": "", "cascadeDelete": false, "minSelect": 0, "maxSelect": 0, "required": false},
	"json":     {"maxSize": 0, "required": false},
	"geoPoint": {"required": false},
	"password": {"pattern": "", "min": 0, "max": 0, "cost": 0, "required": false},
}

// pbField completes a PocketBase field with the members its type has
// (common ones and options at their zero values); set wins. autodate has
// no help nor required, as in PocketBase.
func pbField(set map[string]any) map[string]any {
	typ, _ := set["type"].(string)
	f := map[string]any{"id": "", "name": "", "type": typ, "system": false, "hidden": false, "presentable": false}
	if typ != "autodate" {
		f["help"] = ""
	}
	for k, v := range typeKeys[typ] {
		f[k] = v
	}
	for k, v := range set {
		f[k] = v
	}
	return f
}

// reverseField maps one svcd field to PocketBase's names.
func reverseField(f Field) map[string]any {
	typ, _ := f["type"].(string)
	set := map[string]any{"id": f["id"], "name": f["name"], "type": typ}
	if typ == "vector" {
		set["type"] = "json" // PocketBase has no vector type
	}
	for _, k := range []string{"required", "hidden"} {
		if v, ok := f[k]; ok && !(k == "required" && typ == "autodate") {
			set[k] = v
		}
	}
	if set["id"] == nil {
		set["id"] = ""
	}
	multi, _ := f["multiple"].(bool)
	maxSel := int(num(f["max_select"]))
	switch typ {
	case "text", "password":
		set["min"], set["max"] = int(num(f["min"])), int(num(f["max"]))
		if p, ok := f["pattern"]; ok {
			set["pattern"] = p
		}
	case "editor":
		set["maxSize"] = int64(num(f["max"]))
	case "number":
		if v, ok := f["min"]; ok {
			set["min"] = v
		}
		if v, ok := f["max"]; ok {
			set["max"] = v
		}
		set["onlyInt"] = f["integer"] == true
	case "email", "url":
		set["onlyDomains"], set["exceptDomains"] = f["domains_only"], f["domains_except"]
	case "date":
		for _, k := range []string{"min", "max"} {
			if v, ok := f[k]; ok && num(v) != 0 {
				set[k] = FormatDate(int64(num(v)))
			}
		}
	case "autodate":
		set["onCreate"], set["onUpdate"] = f["on_create"] == true, f["on_update"] == true
	case "select":
		if v, ok := f["values"]; ok && v != nil {
			set["values"] = v
		}
		set["maxSelect"] = selectCount(multi, maxSel)
	case "relation":
		set["collectionId"] = f["collection"]
		set["cascadeDelete"] = f["cascade"] == true
		set["maxSelect"] = selectCount(multi, maxSel)
	case "file":
		set["maxSize"] = int64(num(f["maxSize"]))
		set["maxSelect"] = selectCount(multi, 0)
		if v, ok := f["mimeTypes"]; ok && v != nil {
			set["mimeTypes"] = v
		}
		set["protected"] = f["protected"] == true
	case "json":
		set["maxSize"] = int64(num(f["max_size"]))
	}
	return pbField(set)
}

// selectCount is PocketBase's maxSelect for a svcd field: 1 when single,
// the cap when multiple (PocketBase needs one; 99 stands for no cap).
func selectCount(multiple bool, max int) int {
	switch {
	case !multiple:
		return 1
	case max > 1:
		return max
	}
	return 99
}

// addAuthOptions adds PocketBase's auth members with the values svcd has
// (PocketBase's defaults where svcd has no counterpart).
func addAuthOptions(out map[string]any, o *AuthOptions) {
	if o == nil {
		o = &AuthOptions{Password: true}
	}
	tmpl := map[string]any{"subject": "", "body": ""}
	out["authRule"] = ""
	out["manageRule"] = nil
	out["authAlert"] = map[string]any{"enabled": false, "emailTemplate": tmpl}
	out["oauth2"] = map[string]any{"enabled": o.OAuth2, "mappedFields": map[string]any{"id": "", "name": "", "username": "", "avatarURL": ""}, "providers": []any{}}
	out["passwordAuth"] = map[string]any{"enabled": o.Password, "identityFields": []string{"email"}}
	out["mfa"] = map[string]any{"enabled": false, "duration": 1800, "rule": ""}
	out["otp"] = map[string]any{"enabled": o.OTP, "duration": 600, "length": 6, "emailTemplate": tmpl}
	for k, d := range map[string]int{"authToken": 604800, "passwordResetToken": 1800, "emailChangeToken": 1800, "verificationToken": 259200, "fileToken": 180} {
		out[k] = map[string]any{"duration": d}
	}
	for _, k := range []string{"verificationTemplate", "resetPasswordTemplate", "confirmEmailChangeTemplate"} {
		out[k] = tmpl
	}
}
