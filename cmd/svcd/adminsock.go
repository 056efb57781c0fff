package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
)

// The admin socket lets `svcd admin create` reach a running node: a unix
// socket in the data directory, mode 0600, so only the account that owns
// the data (and so already holds every secret) can use it.
const adminSocketName = "admin.sock"

type socketServer struct {
	ln  net.Listener
	srv *http.Server
}

func (s *socketServer) Close() error {
	err := s.srv.Close()
	os.Remove(s.ln.Addr().String())
	return err
}

func listenAdminSocket(dataDir string, st *stack.Stack, log *slog.Logger) (*socketServer, error) {
	path := filepath.Join(dataDir, adminSocketName)
	os.Remove(path) // a stale socket of a crashed run; the raft lock proves none is live
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admins", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ Email, Password string }
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&c); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		a, _, err := st.Auth.Admins().CreateOwner(r.Context(), c.Email, c.Password)
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, describe(err))
			return
		}
		json.NewEncoder(w).Encode(a)
	})
	mux.HandleFunc("POST /rotate-key", func(w http.ResponseWriter, r *http.Request) {
		res, _, err := st.Engine.RotateKey(r.Context())
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, describe(err))
			return
		}
		json.NewEncoder(w).Encode(res)
	})
	mux.HandleFunc("GET /backup", serveSocketBackup(st.Backups.Take))
	mux.HandleFunc("GET /settings/s3", serveSocketS3(st.Engine.Setting))
	s := &socketServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("admin socket stopped", "err", err)
		}
	}()
	return s, nil
}

// describe renders a domain error for the terminal.
func describe(err error) string {
	e := engine.AsError(err)
	if e == nil || len(e.Details) == 0 {
		return err.Error()
	}
	var parts []string
	for k, v := range e.Details {
		parts = append(parts, fmt.Sprintf("%s: %v", k, v))
	}
	return e.Message + " (" + strings.Join(parts, "; ") + ")"
}

// createViaSocket asks a running node to create the admin. ok is false when
// no node listens on the socket.
func createViaSocket(dataDir, email, password string) (ok bool, err error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	ok, _, err = postSocket(dataDir, "/admins", body)
	return ok, err
}

// postSocket posts body to path on the running node's admin socket. ok is
// false when no node answers there; the answer's body comes back.
func postSocket(dataDir, path string, body []byte) (ok bool, answer []byte, err error) {
	sock := filepath.Join(dataDir, adminSocketName)
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	resp, err := client.Post("http://svcd"+path, "application/json", strings.NewReader(string(body)))
	if err != nil {
		return false, nil, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return true, nil, errors.New(strings.TrimSpace(string(msg)))
	}
	return true, msg, nil
}
