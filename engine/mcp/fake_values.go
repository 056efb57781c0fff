package mcp

import (
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"

	"svcd/engine/schema"
)

// fakeValue makes a plausible value for one field: by its name first
// (email, name, title, city, ...), then by its type and options. ok is
// false when the field is better left out (an optional relation with no
// target, a unique field the faker could collide on is still tried).
func fakeValue(f *gofakeit.Faker, fd *schema.Field, ids []string) (any, bool) {
	switch fd.Type {
	case schema.FieldText:
		return fitText(byName(f, fd.Name), fd), true
	case schema.FieldEditor:
		return "<p>" + f.Paragraph() + "</p>", true
	case schema.FieldEmail:
		return fakeEmail(f), true
	case schema.FieldURL:
		return "https://example.com/" + strings.ToLower(f.LetterN(10)), true
	case schema.FieldNumber:
		lo, hi := 0.0, 1000.0
		if fd.Min != nil {
			lo = *fd.Min
		}
		if fd.Max != nil {
			hi = *fd.Max
		}
		if hi < lo {
			hi = lo
		}
		if fd.Integer {
			return f.IntRange(int(lo), int(hi)), true
		}
		return float64(int(f.Float64Range(lo, hi)*100)) / 100, true
	case schema.FieldBool:
		return f.Bool(), true
	case schema.FieldDate:
		return time.Now().Add(-time.Duration(f.IntRange(0, 365*24)) * time.Hour).Unix(), true
	case schema.FieldSelect:
		if len(fd.Values) == 0 {
			return nil, false
		}
		if fd.Multiple {
			n := f.IntRange(1, len(fd.Values))
			if fd.MaxSelect > 0 {
				n = min(n, fd.MaxSelect)
			}
			return fd.Values[:n], true
		}
		return fd.Values[f.IntRange(0, len(fd.Values)-1)], true
	case schema.FieldJSON:
		return map[string]any{"note": f.Word(), "score": f.IntRange(1, 10)}, true
	case schema.FieldGeoPoint:
		return map[string]any{"lon": f.Longitude(), "lat": f.Latitude()}, true
	case schema.FieldRelation:
		if len(ids) == 0 {
			return nil, false
		}
		if fd.Multiple {
			return []string{ids[f.IntRange(0, len(ids)-1)]}, true
		}
		return ids[f.IntRange(0, len(ids)-1)], true
	case schema.FieldPassword:
		return f.Password(true, true, true, true, false, 20), true
	case schema.FieldVector:
		v := make([]float64, max(fd.Dimensions, 1))
		for i := range v {
			v[i] = f.Float64Range(-1, 1)
		}
		return v, true
	}
	return nil, false
}

// byName guesses text from a field's name.
func byName(f *gofakeit.Faker, name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "first"):
		return f.FirstName()
	case strings.Contains(n, "last"):
		return f.LastName()
	case strings.Contains(n, "name"):
		return f.Name()
	case strings.Contains(n, "title"), strings.Contains(n, "subject"):
		return strings.TrimSuffix(f.Sentence(), ".")
	case strings.Contains(n, "city"):
		return f.City()
	case strings.Contains(n, "country"):
		return f.Country()
	case strings.Contains(n, "phone"):
		return f.Phone()
	case strings.Contains(n, "company"):
		return f.Company()
	case strings.Contains(n, "slug"), strings.Contains(n, "code"):
		return strings.ToLower(f.LetterN(8))
	case strings.Contains(n, "body"), strings.Contains(n, "content"), strings.Contains(n, "desc"):
		return f.Paragraph()
	}
	return f.Sentence()
}

// fitText bounds s to the field's min and max characters.
func fitText(s string, fd *schema.Field) string {
	r := []rune(s)
	if fd.Max != nil && *fd.Max > 0 && len(r) > int(*fd.Max) {
		r = r[:int(*fd.Max)]
	}
	for fd.Min != nil && len(r) < int(*fd.Min) {
		r = append(r, 'x')
	}
	return string(r)
}

// fakeEmail is a unique-enough address at example.com (a reserved
// domain: nothing is ever delivered), of letters and digits only.
func fakeEmail(f *gofakeit.Faker) string {
	first := strings.ToLower(f.LetterN(1) + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, f.FirstName()))
	return first + "." + strings.ToLower(f.LetterN(8)) + "@example.com"
}
