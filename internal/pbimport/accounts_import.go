package pbimport

import (
	"context"
	"fmt"
	"sort"
)

// AccountsReport counts what an import did with accounts that are not
// records: PocketBase's superusers (by email) or its OAuth2 links (by
// USER_ID/PROVIDER).
type AccountsReport struct {
	Created []string `json:"created"`
	Skipped []string `json:"skipped"` // they existed: left as they are
	Failed  []string `json:"failed"`  // "name: reason"
}

func newAccountsReport() *AccountsReport {
	return &AccountsReport{Created: []string{}, Skipped: []string{}, Failed: []string{}}
}

// importAnswer is the answer of the account import routes.
type importAnswer struct {
	Created []string `json:"created"`
	Skipped []string `json:"skipped"`
	Failed  []struct {
		ID      string         `json:"id"`
		Error   string         `json:"error"`
		Details map[string]any `json:"details"`
	} `json:"failed"`
}

func (r *AccountsReport) add(a importAnswer) {
	r.Created = append(r.Created, a.Created...)
	r.Skipped = append(r.Skipped, a.Skipped...)
	for _, f := range a.Failed {
		r.Failed = append(r.Failed, fmt.Sprintf("%s: %s %s", f.ID, f.Error, detailsText(f.Details)))
	}
}

func detailsText(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("(%s %v)", k, d[k])
	}
	return s
}

// ImportSuperusers makes PocketBase's superusers svcd admins with role
// (developer when empty), their bcrypt hashes kept (an admin's first
// sign-in rehashes it to argon2id). An admin whose email exists is left
// as it is and reported as skipped.
func ImportSuperusers(ctx context.Context, src *Source, t *Target, role string, rep *Report) error {
	sus, err := src.Superusers()
	if err != nil {
		return err
	}
	rep.Superusers = newAccountsReport()
	type row struct {
		Email        string `json:"email"`
		PasswordHash string `json:"password_hash"`
		Created      int64  `json:"created"`
		Updated      int64  `json:"updated"`
	}
	for start := 0; start < len(sus); start += chunkRows {
		var rows []row
		for _, su := range sus[start:min(start+chunkRows, len(sus))] {
			rows = append(rows, row{Email: su.Email, PasswordHash: su.PasswordHash, Created: su.Created, Updated: su.Updated})
		}
		var a importAnswer
		if err := t.Do(ctx, "POST", "/admin/import-admins", map[string]any{"role": role, "admins": rows}, &a); err != nil {
			return fmt.Errorf("superusers: %w", err)
		}
		rep.Superusers.add(a)
	}
	return nil
}

// ImportLinks carries PocketBase's OAuth2 links (_externalAuths) to the
// accounts imported with their ids: steps say where each PocketBase
// collection went. A link of a record in a collection that was not
// imported (a superuser's) and one whose provider svcd does not know are
// reported and skipped; a link whose account did not come across fails.
func ImportLinks(ctx context.Context, src *Source, t *Target, steps []Step, rep *Report) error {
	eas, err := src.ExternalAuths()
	if err != nil {
		return err
	}
	rep.OAuth2Links = newAccountsReport()
	to := map[string]string{} // PocketBase collection id -> svcd auth collection
	for _, s := range steps {
		if s.From.Type == "auth" {
			to[s.From.ID] = s.Translated.Name
		}
	}
	type link struct {
		UserID   string `json:"user_id"`
		Provider string `json:"provider"`
		Subject  string `json:"subject"`
		Created  int64  `json:"created"`
	}
	byColl := map[string][]link{}
	var order []string
	for _, ea := range eas {
		coll, ok := to[ea.CollectionRef]
		if !ok {
			rep.Problemf("_externalAuths: %s link %s of record %s is not imported: its collection %s was not imported as records",
				ea.Provider, ea.ProviderID, ea.RecordRef, src.collectionName(ea.CollectionRef))
			continue
		}
		if _, seen := byColl[coll]; !seen {
			order = append(order, coll)
		}
		byColl[coll] = append(byColl[coll], link{UserID: ea.RecordRef, Provider: ea.Provider, Subject: ea.ProviderID, Created: ea.Created})
	}
	for _, coll := range order {
		links := byColl[coll]
		for start := 0; start < len(links); start += chunkRows {
			var a importAnswer
			body := map[string]any{"collection": coll, "links": links[start:min(start+chunkRows, len(links))]}
			if err := t.Do(ctx, "POST", "/admin/import-oauth2-links", body, &a); err != nil {
				return fmt.Errorf("OAuth2 links of %s: %w", coll, err)
			}
			// A provider svcd does not know is no failure to retry: it is
			// reported and skipped.
			kept := a.Failed[:0]
			for _, f := range a.Failed {
				if f.Details["provider"] == "is not a known provider" {
					rep.Problemf("_externalAuths: %s/%s: svcd has no OAuth2 provider of that name; the link is not imported", coll, f.ID)
					continue
				}
				kept = append(kept, f)
			}
			a.Failed = kept
			for i := range a.Created {
				a.Created[i] = coll + "/" + a.Created[i]
			}
			for i := range a.Skipped {
				a.Skipped[i] = coll + "/" + a.Skipped[i]
			}
			for i := range a.Failed {
				a.Failed[i].ID = coll + "/" + a.Failed[i].ID
			}
			rep.OAuth2Links.add(a)
		}
	}
	return nil
}
