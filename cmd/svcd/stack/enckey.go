package stack

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"svcd/engine/crypt"
)

// encKeyFile holds the encryption key a node received when it joined a
// cluster (0600; never in the database).
const encKeyFile = "encryption.key"

// keyring builds the encryption keyring: SVC_ENCRYPTION_KEY when set, else
// the key file written at join; SVC_ENCRYPTION_KEY_OLD adds keys that may
// still open values. Without a key it warns that secrets are stored in
// plain text.
func keyring(cfg Config, log *slog.Logger) (*crypt.Keyring, error) {
	current := cfg.EncryptionKey
	if current == "" {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, encKeyFile))
		switch {
		case err == nil:
			current = strings.TrimSpace(string(b))
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	if current == "" {
		if len(cfg.EncryptionKeyOld) > 0 {
			return nil, errors.New("SVC_ENCRYPTION_KEY_OLD is set without SVC_ENCRYPTION_KEY")
		}
		log.Warn("no SVC_ENCRYPTION_KEY: secret settings are stored in plain text and encrypted fields cannot be created")
		return nil, nil
	}
	return crypt.NewKeyring(current, cfg.EncryptionKeyOld)
}

// WriteEncryptionKey stores a key received from the cluster (0600).
func WriteEncryptionKey(dataDir string, key []byte) error {
	if len(key) != crypt.KeySize {
		return fmt.Errorf("encryption key: %d bytes, want %d", len(key), crypt.KeySize)
	}
	path := filepath.Join(dataDir, encKeyFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
