package apitest

import (
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

// RunMockOIDC starts mockoidc on loopback with its requests served one at
// a time: its session store is a map without a lock, so concurrent
// authorize and token requests race inside it (the race detector says
// so). Serialized, it is the OIDC provider the tests need.
func RunMockOIDC(t testing.TB) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	if err := m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return m
}
