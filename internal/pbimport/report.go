package pbimport

import "fmt"

// Report is what an import did and what it could not carry over.
type Report struct {
	Collections []CollectionReport `json:"collections"`
	// Problems are the things not carried over, each with the original
	// text where there is one.
	Problems []string `json:"problems"`
	// Superusers: PocketBase's superusers, made svcd admins (by email).
	Superusers *AccountsReport `json:"superusers,omitempty"`
	// OAuth2Links: PocketBase's _externalAuths rows, by
	// COLLECTION/USER_ID/PROVIDER.
	OAuth2Links *AccountsReport `json:"oauth2_links,omitempty"`
}

// CollectionReport counts one collection's records.
type CollectionReport struct {
	From     string   `json:"from"` // the PocketBase name
	To       string   `json:"to"`   // the svcd name
	Created  int      `json:"created"`
	Skipped  int      `json:"skipped"` // their id existed: left as they are
	Failed   []string `json:"failed"`  // "id: reason"
	Files    int      `json:"files"`   // uploaded
	FileFail []string `json:"file_failures"`
}

// Problemf records a problem.
func (r *Report) Problemf(format string, args ...any) {
	r.Problems = append(r.Problems, sprintf(format, args...))
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
