package api_test

import (
	"context"
	"net/http"
	"testing"

	"svcd/api/apitest"
	"svcd/fsm"
)

// accountRows counts a user's rows in the per-account auth tables.
func accountRows(t *testing.T, s *apitest.Server, uid string) int {
	t.Helper()
	var n int
	err := s.Stack.Store.View(context.Background(), func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT (SELECT count(*) FROM _svc_totp WHERE user_id = ?1) +
			(SELECT count(*) FROM _svc_recovery_codes WHERE user_id = ?1) +
			(SELECT count(*) FROM _svc_otps WHERE user_id = ?1) +
			(SELECT count(*) FROM _svc_mfa_tickets WHERE user_id = ?1)`, uid).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAccountStateLeavesWithTheAccount: deleting a user, or its auth
// collection, deletes its TOTP enrolment and the like in the same command.
func TestAccountStateLeavesWithTheAccount(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	eve := register(t, s, "members", "eve@example.com", userPassword)
	bob := register(t, s, "members", "bob@example.com", userPassword)
	for _, email := range []string{"eve@example.com", "bob@example.com"} {
		tok := signIn(t, s, "members", email, userPassword)["token"].(string)
		data(t, s, http.StatusOK, http.MethodPost, "/api/v1/auth/members/totp/setup", nil, bearer(tok))
	}
	if accountRows(t, s, eve) == 0 || accountRows(t, s, bob) == 0 {
		t.Fatal("TOTP setup left no rows")
	}
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/members/"+eve, nil)
	if n := accountRows(t, s, eve); n != 0 {
		t.Fatalf("%d rows of a deleted user remain", n)
	}
	if accountRows(t, s, bob) == 0 {
		t.Fatal("another user's rows went too")
	}
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/admin/collections/members", nil)
	if n := accountRows(t, s, bob); n != 0 {
		t.Fatalf("%d rows of a deleted collection's user remain", n)
	}
}
