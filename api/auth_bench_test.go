package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api"
	"svcd/api/apitest"
	"svcd/cmd/svcd/stack"
	"svcd/engine/password"
	"svcd/fsm"
)

// Benchmarks of sign-in and of authenticated reads, over HTTP against a
// real node on loopback (docs/benchmarks.md, "Sign-in and authenticated
// reads").

// BenchmarkPasswordVerify is one argon2id verify with the production
// parameters (password.Default), the cost of every sign-in.
func BenchmarkPasswordVerify(b *testing.B) {
	h, err := password.Hash("correct-horse-battery", password.Default)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := password.Verify("correct-horse-battery", h); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// startProductionNode is apitest.Start with the production argon2id
// parameters: sign-in costs what it costs in production.
func startProductionNode(b *testing.B) string {
	b.Helper()
	st, err := stack.Open(stack.Config{DataDir: b.TempDir(), PasswordParams: password.Default,
		OnStall: func(st fsm.Stall) { b.Errorf("stalled: %s", st.Reason) }}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: api.New(st.APIOptions(slog.New(slog.DiscardHandler)))}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.Error(err)
		}
	}()
	b.Cleanup(func() {
		hs.Close()
		st.Close()
	})
	return "http://" + ln.Addr().String()
}

// post sends a JSON body and returns the status, draining the answer.
func post(c *http.Client, url, body string, headers map[string]string) (int, []byte, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// BenchmarkUserLogin is POST /auth/users/login with the right password
// and the production argon2id parameters, with as many clients as cores
// and with twice as many.
func BenchmarkUserLogin(b *testing.B) {
	url := startProductionNode(b)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	code, out, err := post(c, url+"/api/v1/admin/setup", `{"email":"a@example.com","password":"admin-password-123"}`, nil)
	if err != nil || code != http.StatusCreated {
		b.Fatalf("setup: %d %s %v", code, out, err)
	}
	admin := map[string]string{"Authorization": "Bearer " + strings.Split(strings.Split(string(out), `"token":"`)[1], `"`)[0]}
	code, out, err = post(c, url+"/api/v1/admin/collections", `{"name":"users","type":"auth","fields":[],"create_rule":""}`, admin)
	if err != nil || code != http.StatusCreated {
		b.Fatalf("collection: %d %s %v", code, out, err)
	}
	const creds = `{"email":"bench@example.com","password":"bench-password-123"}`
	if code, out, err := post(c, url+"/api/v1/auth/users/register", creds, nil); err != nil || code != http.StatusCreated {
		b.Fatalf("register: %d %s %v", code, out, err)
	}
	for _, par := range []int{1, 2} { // clients per GOMAXPROCS (2 here): 2 and 4 clients
		b.Run(fmt.Sprintf("%d clients", par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			var failed atomic.Int64
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if code, _, err := post(c, url+"/api/v1/auth/users/login", creds, nil); err != nil || code != http.StatusOK {
						failed.Add(1)
					}
				}
			})
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d sign-ins failed", n)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "logins/s")
		})
	}
}

// BenchmarkAuthenticatedGet reads one record with each kind of
// credential: an admin session JWT, a user session JWT (the view rule
// checks the user), and an API token (scopes read live).
func BenchmarkAuthenticatedGet(b *testing.B) {
	s := apitest.Start(b, apitest.Options{})
	s.CreateCollection(b, usersCollection())
	s.CreateCollection(b, coll("notes", "base", []map[string]any{f("title", "text"), f("owner", "text")},
		"view_rule", "owner = @request.auth.id"))
	user := signUp(b, s, "reader@example.com")
	uid := apitest.Obj(b, apitest.DecodeMap(b, must(b, s, "GET", "/api/v1/auth/me", bearer(user)))["data"])["id"].(string)
	id := s.CreateRecord(b, "notes", map[string]any{"title": "t", "owner": uid})["id"].(string)
	minted := apitest.Obj(b, s.MustAdmin(b, http.StatusCreated, "POST", "/api/v1/admin/api-tokens",
		map[string]any{"name": "bench", "scopes": []string{"read"}})["data"])["token"].(string)
	for _, c := range []struct{ name, tok string }{
		{"admin JWT", s.AdminToken(b)},
		{"user JWT", user},
		{"API token", minted},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			url := s.URL + "/api/v1/notes/" + id
			var failed atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+c.tok)
				for pb.Next() {
					res, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						continue
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						failed.Add(1)
					}
				}
			})
			b.StopTimer()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d reads failed", n)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
		})
	}
}
