package pbimport

import (
	"database/sql"
	"fmt"

	"svcd/internal/pbschema"
)

// Superuser is a row of PocketBase's _superusers: an operator account,
// with its bcrypt hash.
type Superuser struct {
	ID, Email, PasswordHash string
	Created, Updated        int64 // Unix seconds; 0 when unset
}

// ExternalAuth is a row of PocketBase's _externalAuths: an OAuth2 link
// of a record of an auth collection (CollectionRef is the collection's
// id) to its identity (ProviderID) at Provider.
type ExternalAuth struct {
	ID, CollectionRef, RecordRef, Provider, ProviderID string
	Created                                            int64
}

// Superusers lists the _superusers rows in rowid order (none when the
// table does not exist).
func (s *Source) Superusers() ([]Superuser, error) {
	var out []Superuser
	err := s.system("_superusers", `SELECT id, email, password, created, updated FROM _superusers ORDER BY rowid`, func(rows *sql.Rows) error {
		var su Superuser
		var created, updated string
		if err := rows.Scan(&su.ID, &su.Email, &su.PasswordHash, &created, &updated); err != nil {
			return err
		}
		su.Created, su.Updated = unixOf(created), unixOf(updated)
		out = append(out, su)
		return nil
	})
	return out, err
}

// ExternalAuths lists the _externalAuths rows in rowid order (none when
// the table does not exist).
func (s *Source) ExternalAuths() ([]ExternalAuth, error) {
	var out []ExternalAuth
	err := s.system("_externalAuths", `SELECT id, collectionRef, recordRef, provider, providerId, created FROM _externalAuths ORDER BY rowid`, func(rows *sql.Rows) error {
		var ea ExternalAuth
		var created string
		if err := rows.Scan(&ea.ID, &ea.CollectionRef, &ea.RecordRef, &ea.Provider, &ea.ProviderID, &created); err != nil {
			return err
		}
		ea.Created = unixOf(created)
		out = append(out, ea)
		return nil
	})
	return out, err
}

// system runs q over PocketBase's system table, calling fn per row; a
// database without the table has no rows.
func (s *Source) system(table, q string, fn func(*sql.Rows) error) error {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n == 0 {
		return err
	}
	rows, err := s.db.Query(q)
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return rows.Err()
}

// unixOf is a PocketBase date's Unix seconds, 0 for a blank or broken one.
func unixOf(s string) int64 {
	if s == "" {
		return 0
	}
	t, err := pbschema.ParseDate(s)
	if err != nil {
		return 0
	}
	return t.Unix()
}

// collectionName is the name of PocketBase collection id (the id itself
// when it is unknown).
func (s *Source) collectionName(id string) string {
	var name string
	if err := s.db.QueryRow(`SELECT name FROM _collections WHERE id = ?`, id).Scan(&name); err != nil {
		return id
	}
	return name
}
