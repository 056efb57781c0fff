package schema

var _ FieldType = autodateType{}

// autodateType is a timestamp the engine sets on create and/or update.
// Client input is ignored: Normalize always yields nil and the engine writes
// unix seconds itself. Stored as INTEGER; returned as an integer or null.
type autodateType struct{}

func (autodateType) Name() string { return FieldAutodate }

func (autodateType) Column(*Field) Column { return ColInteger }

func (autodateType) OptionKeys() []string { return []string{"on_create", "on_update"} }

func (autodateType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{OnCreate: o.OnCreate, OnUpdate: o.OnUpdate}
	if !o.OnCreate && !o.OnUpdate {
		return "on_create or on_update must be true"
	}
	return ""
}

func (autodateType) Normalize(*Field, any) (any, string) { return nil, "" }

func (autodateType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (autodateType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredUnix(buf, stored)
}
