package api_test

import (
	"fmt"
	"slices"
	"strings"
)

// The authorization matrix (authz_matrix_test.go) compares what each
// caller sees through every way the API reveals a value with what the
// rules say that caller may see. This file is the rules' side, written
// from SPEC.md and CONTRACT.md independently of the engine: who may view
// which record and which fields, for the schema of matrixSchema.
//
// Every stored text of the fixture is a marker, "m<collection>x<record>x
// <field>", unique and a single full-text token, so any answer can be
// scanned for the values it reveals.

// A kind of caller.
type callerKind int

const (
	kindAnon  callerKind = iota
	kindUser             // a user, a guest, an impersonation of a user
	kindAdmin            // an admin session: role decides
	kindToken            // an API token minted by the owner: scopes decide
)

// mcaller is one caller of the matrix.
type mcaller struct {
	name    string
	kind    callerKind
	user    string   // the members record the caller is (kindUser)
	role    string   // kindAdmin
	scopes  []string // kindToken
	headers map[string]string
}

// The collections of the fixture, one per kind the matrix covers, and the
// records of each (keys; ids are assigned by the server).
var matrixRecords = map[string][]string{
	"members": {"ua", "ub", "ug"}, // auth: a user sees their own record
	"owned":   {"oa", "ob"},       // owner rule: owner = @request.auth.id
	"vault":   {"va"},             // admin-only (view rule null)
	"pub":     {"pa", "pb"},       // public, with a hidden field and relations
	"pins":    {"na"},             // public with hidden fields (text, vector)
	"notes":   {"ta", "tb"},       // relations and back-relations
}

// matrixCollections lists the collections in a fixed order.
func matrixCollections() []string {
	return []string{"members", "owned", "vault", "pub", "pins", "notes"}
}

// hiddenFields are the hidden fields per collection.
var hiddenFields = map[string][]string{
	"members": {"nick"},
	"owned":   {"secret"},
	"pub":     {"code"},
	"pins":    {"pin"},
}

// ownerOf is the owner (a members record) of each owned record.
var ownerOf = map[string]string{"oa": "ua", "ob": "ub"}

// full reports whether c acts as an admin on coll: an admin session of
// editor or above, or an API token whose scopes reach coll (minted by the
// owner). A viewer reads app data as an anonymous caller.
func (c mcaller) full(coll string) bool {
	switch c.kind {
	case kindAdmin:
		return c.role != "viewer"
	case kindToken:
		return c.reaches(coll)
	}
	return false
}

// reaches reports whether c may read coll at all: a token only inside its
// scopes.
func (c mcaller) reaches(coll string) bool {
	if c.kind != kindToken {
		return true
	}
	for _, s := range c.scopes {
		if s == "admin" || s == "read" || s == "collection:"+coll+":read" || s == "collection:"+coll+":*" || s == "collection:*:read" {
			return true
		}
	}
	return false
}

// mayView reports whether c may read record rec of coll.
func (c mcaller) mayView(coll, rec string) bool {
	switch {
	case !c.reaches(coll):
		return false
	case c.full(coll):
		return true
	}
	switch coll {
	case "vault":
		return false
	case "owned":
		return c.kind == kindUser && ownerOf[rec] == c.user
	case "members":
		return c.kind == kindUser && rec == c.user
	}
	return true
}

// allowed reports whether c may learn the value of field of rec of coll.
func (c mcaller) allowed(m marker) bool {
	if !c.mayView(m.coll, m.rec) {
		return false
	}
	return !slices.Contains(hiddenFields[m.coll], m.field) || c.full(m.coll)
}

// wantStatus is what a direct read of rec of coll answers c: 403 for a
// collection c cannot reach or an admin-only one, 404 for a record it may
// not view, else 200.
func (c mcaller) wantStatus(coll, rec string) int {
	switch {
	case !c.reaches(coll), coll == "vault" && !c.full(coll):
		return 403
	case !c.mayView(coll, rec):
		return 404
	}
	return 200
}

// wantListStatus is what a list of coll answers c.
func (c mcaller) wantListStatus(coll string) int {
	if !c.reaches(coll) || coll == "vault" && !c.full(coll) {
		return 403
	}
	return 200
}

// marker names one stored value of the fixture.
type marker struct{ coll, rec, field string }

func (m marker) String() string { return "m" + m.coll + "x" + m.rec + "x" + m.field }

func (m marker) label() string { return fmt.Sprintf("%s/%s.%s", m.coll, m.rec, m.field) }

// markers are every marker of the fixture: each text field of each
// record (emails carry theirs before the @).
func markers() []marker {
	fields := map[string][]string{
		"members": {"name", "nick", "email"},
		"owned":   {"title", "secret"},
		"vault":   {"name"},
		"pub":     {"title", "code"},
		"pins":    {"name", "pin"},
		"notes":   {"text"},
	}
	var out []marker
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			if coll == "members" && rec == "ug" {
				out = append(out, marker{coll, rec, "name"}) // a guest has a synthetic email
				continue
			}
			for _, f := range fields[coll] {
				out = append(out, marker{coll, rec, f})
			}
		}
	}
	return out
}

// revealed lists the markers body holds.
func revealed(body []byte) []marker {
	var out []marker
	s := string(body)
	for _, m := range markers() {
		if strings.Contains(s, m.String()) {
			out = append(out, m)
		}
	}
	return out
}
