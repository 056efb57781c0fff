package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
)

// rotateUsage explains the command; it re-encrypts every secret setting
// and encrypted field value under the current SVC_ENCRYPTION_KEY, in one
// replicated command, after every node was restarted with the new key in
// SVC_ENCRYPTION_KEY and the previous one in SVC_ENCRYPTION_KEY_OLD; it
// asks the running node through its admin socket, or starts this one
// briefly, and is safe to re-run (docs/configuration.md).
const rotateUsage = "usage: svcd rotate-key [--dir DIR] (after restarting every node with the new SVC_ENCRYPTION_KEY and the old one in SVC_ENCRYPTION_KEY_OLD)"

func runRotateKey(args []string) error {
	fs := flag.NewFlagSet("rotate-key", flag.ContinueOnError)
	dir := fs.String("dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return errors.New(rotateUsage)
	}
	dataDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	var res engine.RotateResult
	if ok, answer, err := postSocket(dataDir, "/rotate-key", nil); ok {
		if err != nil {
			return fmt.Errorf("rotate-key: %s", err)
		}
		if err := json.Unmarshal(answer, &res); err != nil {
			return fmt.Errorf("rotate-key: %w", err)
		}
		printRotation(&res, "through the running node")
		return nil
	}
	key, old := encryptionKeys()
	st, err := stack.Open(stack.Config{DataDir: dataDir, EncryptionKey: key, EncryptionKeyOld: old}, newLogger(slog.LevelWarn))
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		return fmt.Errorf("node not ready: %w", err)
	}
	r, _, err := st.Engine.RotateKey(ctx)
	if err != nil {
		return fmt.Errorf("rotate-key: %s", describe(err))
	}
	printRotation(r, "")
	return nil
}

func printRotation(r *engine.RotateResult, how string) {
	msg := fmt.Sprintf("re-encrypted %d settings and %d field values", r.Settings, r.Values)
	if r.Skipped > 0 {
		msg += fmt.Sprintf(" (%d changed meanwhile: run it again)", r.Skipped)
	}
	if how != "" {
		msg += " " + how
	}
	fmt.Println(msg)
}
