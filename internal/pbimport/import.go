package pbimport

import (
	"context"
	"time"
)

// Options are an import's choices.
type Options struct {
	// DryRun plans (translates and orders the collections) and reports,
	// writing nothing.
	DryRun bool
	// Now stamps records that have no created time.
	Now time.Time
	// SuperuserRole is the svcd admin role PocketBase's superusers get
	// (developer when empty; owner is allowed).
	SuperuserRole string
}

// Import carries src's collections, records and files to the node t: the
// collections translated (pbschema), created in dependency order with
// their indexes (one that exists is kept), then each collection's records
// and files, then PocketBase's superusers (svcd admins with
// o.SuperuserRole) and its OAuth2 links of the imported accounts.
// Running it again changes nothing: existing collections, records,
// admins and links are skipped. The report says what was done and what could not
// be carried over.
func Import(ctx context.Context, src *Source, t *Target, o Options) (*Report, error) {
	rep := &Report{Collections: []CollectionReport{}, Problems: []string{}}
	colls, err := src.Collections()
	if err != nil {
		return nil, err
	}
	steps := Plan(colls, rep)
	if o.DryRun {
		for _, s := range steps {
			rep.Collections = append(rep.Collections, CollectionReport{From: s.From.Name, To: s.Translated.Name, Failed: []string{}, FileFail: []string{}})
		}
		return rep, nil
	}
	for _, s := range steps {
		if _, err := CreateCollection(ctx, t, s, rep); err != nil {
			return rep, err
		}
	}
	for _, s := range steps {
		if s.Translated.Type == "view" {
			continue // its rows come from its query
		}
		skip := map[string]bool{}
		for _, f := range s.From.Fields {
			if _, ok := s.Translated.FieldNames[f.Name]; !ok {
				skip[f.Name] = true
			}
		}
		p := RecordPlan{From: s.From, To: s.Translated.Name, Rename: s.Translated.FieldNames, Skip: skip}
		if err := ImportRecords(ctx, src, t, p, o.Now, rep); err != nil {
			return rep, err
		}
	}
	if err := ImportSuperusers(ctx, src, t, o.SuperuserRole, rep); err != nil {
		return rep, err
	}
	if err := ImportLinks(ctx, src, t, steps, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// Partial reports whether some record, file, superuser or OAuth2 link
// did not come across.
func (r *Report) Partial() bool {
	for _, a := range []*AccountsReport{r.Superusers, r.OAuth2Links} {
		if a != nil && len(a.Failed) > 0 {
			return true
		}
	}
	for _, c := range r.Collections {
		if len(c.Failed) > 0 || len(c.FileFail) > 0 {
			return true
		}
	}
	return false
}
