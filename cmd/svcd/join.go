package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svcd/cluster"
	"svcd/cmd/svcd/stack"
)

// hasRaftState reports whether the data directory already holds a Raft log:
// a restarted node rejoins on its own through its stored configuration.
func hasRaftState(dataDir string) bool {
	fi, err := os.Stat(filepath.Join(dataDir, "raft", "raft.db"))
	return err == nil && fi.Size() > 0
}

// joinCluster asks the members at urls (any of them; a follower relays to
// the leader) to add this node, retrying with backoff until ctx ends, and
// stores the token signing key it receives.
func joinCluster(ctx context.Context, cfg *config, id string, log *slog.Logger) error {
	body, _ := json.Marshal(cluster.JoinRequest{ID: id, Addr: cfg.raftAddr, Voter: !cfg.nonVoter, Reseed: cfg.reseed})
	client := &http.Client{Timeout: 15 * time.Second}
	backoff := 200 * time.Millisecond
	var last error
	for {
		for _, u := range strings.Split(cfg.join, ",") {
			u = strings.TrimRight(strings.TrimSpace(u), "/")
			if u == "" {
				continue
			}
			secrets, err := joinOnce(ctx, client, u, cfg.clusterKey, body)
			if err == nil {
				log.Info("joined the cluster", "via", u)
				return storeSecrets(cfg, secrets)
			}
			last = err
			log.Warn("join attempt failed; retrying", "via", u, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join %s: %w", cfg.join, errors.Join(ctx.Err(), last))
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func joinOnce(ctx context.Context, client *http.Client, base, key string, body []byte) ([]byte, error) {
	auth, err := joinSignature(ctx, client, base, key, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/_/join", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(cluster.JoinAuthHeader, auth)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var out struct {
		Secrets []byte `json:"secrets"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return cluster.Unseal(key, out.Secrets)
}

// joinSignature signs a join of body for the member at base: for its node
// id, which GET /_/join names; a member that does not know that route (404
// or 405) predates join version 2 and gets the version 1 signature it
// expects (cluster/joinauth.go).
func joinSignature(ctx context.Context, client *http.Client, base, key string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_/join", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return cluster.SignJoinV1(key, time.Now(), body), nil
	default:
		return "", fmt.Errorf("GET /_/join: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var info struct {
		NodeID   string `json:"node_id"`
		JoinAuth int    `json:"join_auth"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.NodeID == "" {
		return "", fmt.Errorf("GET /_/join: unexpected answer %q", b)
	}
	if info.JoinAuth < cluster.JoinAuthVersion {
		return cluster.SignJoinV1(key, time.Now(), body), nil
	}
	return cluster.SignJoin(key, info.NodeID, time.Now(), body)
}

// storeSecrets keeps the cluster's token signing key and encryption key,
// each unless this node has its own (SVC_JWT_SECRET, SVC_ENCRYPTION_KEY),
// which must then be the same on every node.
func storeSecrets(cfg *config, sealed []byte) error {
	var s struct {
		JWTKey string `json:"jwt_key"`
		EncKey string `json:"enc_key"`
	}
	if err := json.Unmarshal(sealed, &s); err != nil {
		return fmt.Errorf("join: secrets: %w", err)
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return err
	}
	if cfg.jwtSecret == "" {
		key, err := hex.DecodeString(s.JWTKey)
		if err != nil {
			return fmt.Errorf("join: secrets: %w", err)
		}
		if err := stack.WriteSigningKey(cfg.dataDir, key); err != nil {
			return err
		}
	}
	if cfg.encKey == "" && s.EncKey != "" {
		key, err := hex.DecodeString(s.EncKey)
		if err != nil {
			return fmt.Errorf("join: secrets: %w", err)
		}
		return stack.WriteEncryptionKey(cfg.dataDir, key)
	}
	return nil
}
