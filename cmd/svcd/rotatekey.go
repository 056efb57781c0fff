package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
)

// runRotateKey is svcd rotate-key (its help: cli_commands.go).
func runRotateKey(args []string) error {
	var dir string
	fs := dirFlagSet("rotate-key", &dir)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	dataDir, err := filepath.Abs(dir)
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
	st, err := stack.Open(stack.Config{DataDir: dataDir, EncryptionKey: key, EncryptionKeyOld: old}, quietLog())
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
	if r.Secrets > 0 {
		msg = fmt.Sprintf("re-encrypted %d settings, %d field values and %d webhook secrets", r.Settings, r.Values, r.Secrets)
	}
	if r.Skipped > 0 {
		msg += fmt.Sprintf(" (%d changed meanwhile: run it again)", r.Skipped)
	}
	if how != "" {
		msg += " " + how
	}
	fmt.Println(msg)
}
