package schema

var _ FieldType = editorType{}

// editorType is rich text (HTML allowed, not sanitised here). It behaves as
// text but cannot be encrypted. Stored as TEXT.
type editorType struct{}

func (editorType) Name() string { return FieldEditor }

func (editorType) Column(*Field) Column { return ColText }

func (editorType) OptionKeys() []string { return []string{"min", "max", "pattern", "searchable"} }

func (editorType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{
		Min:        o.Min,
		Max:        o.Max,
		Pattern:    o.Pattern,
		Searchable: o.Searchable,
	}
	return cleanTextOptions(&f.Options)
}

func (editorType) Normalize(f *Field, in any) (any, string) {
	return normalizeText(f, in)
}

func (editorType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (editorType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredText(buf, stored)
}
