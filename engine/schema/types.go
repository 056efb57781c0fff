package schema

// Field type names as they appear in the field JSON.
const (
	FieldText     = "text"
	FieldEditor   = "editor"
	FieldEmail    = "email"
	FieldURL      = "url"
	FieldNumber   = "number"
	FieldBool     = "bool"
	FieldDate     = "date"
	FieldAutodate = "autodate"
	FieldSelect   = "select"
	FieldJSON     = "json"
	FieldGeoPoint = "geoPoint"
	FieldRelation = "relation"
	FieldFile     = "file"
	FieldPassword = "password"
	FieldVector   = "vector"
)

// TypeOf returns the field type with the given name (case-sensitive, as in
// the field JSON); ok is false for an unknown name.
func TypeOf(name string) (t FieldType, ok bool) {
	switch name {
	case FieldText:
		return textType{}, true
	case FieldEditor:
		return editorType{}, true
	case FieldEmail:
		return emailType{}, true
	case FieldURL:
		return urlType{}, true
	case FieldNumber:
		return numberType{}, true
	case FieldBool:
		return boolType{}, true
	case FieldDate:
		return dateType{}, true
	case FieldAutodate:
		return autodateType{}, true
	case FieldSelect:
		return selectType{}, true
	case FieldJSON:
		return jsonType{}, true
	case FieldGeoPoint:
		return geoPointType{}, true
	case FieldRelation:
		return relationType{}, true
	case FieldFile:
		return fileType{}, true
	case FieldPassword:
		return passwordType{}, true
	case FieldVector:
		return vectorType{}, true
	}
	return nil, false
}

// TypeNames returns every field type name, in a fixed order. The slice is
// new on each call.
func TypeNames() []string {
	return []string{
		FieldText, FieldEditor, FieldEmail, FieldURL, FieldNumber, FieldBool,
		FieldDate, FieldAutodate, FieldSelect, FieldJSON, FieldGeoPoint,
		FieldRelation, FieldFile, FieldPassword, FieldVector,
	}
}
