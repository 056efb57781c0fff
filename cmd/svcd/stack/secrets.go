package stack

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// signingKey returns the JWT key: SVC_JWT_SECRET when set, else the key file
// in the data directory, generated (0600) on first start. The key never
// enters the database.
func signingKey(dataDir, secret string, log *slog.Logger) ([]byte, error) {
	if secret != "" {
		if len(secret) < 32 {
			log.Warn("SVC_JWT_SECRET is shorter than 32 bytes; using its SHA-256")
			sum := sha256.Sum256([]byte(secret))
			return sum[:], nil
		}
		return []byte(secret), nil
	}
	return loadOrCreateKeyFile(filepath.Join(dataDir, "jwt.key"))
}

// loadOrCreateKeyFile reads a hex key file or writes a new random one.
func loadOrCreateKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < 32 {
			return nil, fmt.Errorf("key file %s is corrupt", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return key, nil
}

// nodeID returns the configured id, or the one stored in the data
// directory, generating it on first start.
func nodeID(dataDir, configured string) (string, error) {
	path := filepath.Join(dataDir, "node-id")
	if configured != "" {
		return configured, nil
	}
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	r := make([]byte, 4)
	if _, err := rand.Read(r); err != nil {
		return "", err
	}
	id := "node-" + hex.EncodeToString(r)
	return id, os.WriteFile(path, []byte(id+"\n"), 0o600)
}

// WriteSigningKey stores a key received from the cluster as the data
// directory's key file (0600).
func WriteSigningKey(dataDir string, key []byte) error {
	if len(key) < 32 {
		return fmt.Errorf("signing key too short")
	}
	path := filepath.Join(dataDir, "jwt.key")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// NodeID is the configured id, or the one kept in the data directory.
func NodeID(dataDir, configured string) (string, error) { return nodeID(dataDir, configured) }
