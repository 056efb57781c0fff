package pbcompat

import (
	"encoding/json"
	"testing"

	"svcd/engine"
	"svcd/engine/schema"
)

// TestRecordOut: dates, blank values and the auth members
// (pb:tools/types/datetime.go; pb:core/field_*.go column defaults;
// pb:core/record_model.go PublicExport).
func TestRecordOut(t *testing.T) {
	c := &schema.Collection{ID: "col_u", Name: "users", Type: schema.TypeAuth, Fields: []*schema.Field{
		{Name: "email", Type: schema.FieldEmail}, {Name: "email_verified", Type: schema.FieldBool},
		{Name: "n", Type: schema.FieldNumber}, {Name: "b", Type: schema.FieldBool}, {Name: "d", Type: schema.FieldDate},
		{Name: "tags", Type: schema.FieldSelect, Options: schema.Options{Multiple: true}}, {Name: "one", Type: schema.FieldRelation},
		{Name: "j", Type: schema.FieldJSON}, {Name: "g", Type: schema.FieldGeoPoint},
	}}
	raw := []byte(`{"id":"u1","collectionId":"col_u","collectionName":"users","created":1704189600,"updated":1704189601,` +
		`"email":"a@example.com","email_verified":true,"is_anonymous":false,"n":null,"b":null,"d":null,"tags":null,"one":null,"j":null,"g":null}`)
	want := `{"b":false,"collectionId":"col_u","collectionName":"users","created":"2024-01-02 10:00:00.000Z","d":"","emailVisibility":false,` +
		`"g":{"lat":0,"lon":0},"id":"u1","j":null,"n":0,"one":"","tags":[],"updated":"2024-01-02 10:00:01.000Z","verified":true}`
	got, err := RecordOut(nil, c, raw, engine.Principal{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("a guest's view:\n got %s\nwant %s", b, want)
	}
	for name, p := range map[string]engine.Principal{
		"owner":     {Kind: engine.User, ID: "u1", Collection: "users"},
		"superuser": {Kind: engine.AdminPrincipal},
	} {
		got, err := RecordOut(nil, c, raw, p)
		if err != nil || got["email"] != "a@example.com" {
			t.Errorf("%s: email %v (%v)", name, got["email"], err)
		}
	}
	other, _ := RecordOut(nil, c, raw, engine.Principal{Kind: engine.User, ID: "u2", Collection: "users"})
	if _, ok := other["email"]; ok {
		t.Errorf("another user sees the email")
	}
}
