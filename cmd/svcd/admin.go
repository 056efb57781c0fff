package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"svcd/cmd/svcd/stack"
)

func runAdmin(args []string) error {
	if len(args) < 1 || args[0] != "create" {
		return errors.New("usage: svcd admin create EMAIL PASSWORD")
	}
	fs := flag.NewFlagSet("admin create", flag.ContinueOnError)
	dir := fs.String("dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("usage: svcd admin create EMAIL PASSWORD")
	}
	email, password := fs.Arg(0), fs.Arg(1)
	dataDir, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	// A running node owns the Raft log: ask it over the admin socket.
	if ok, err := createViaSocket(dataDir, email, password); ok {
		if err != nil {
			return fmt.Errorf("create admin: %s", err)
		}
		fmt.Printf("admin %s created (owner) through the running node\n", email)
		return nil
	}
	// No node is running: start this one briefly and write through its log.
	st, err := stack.Open(stack.Config{DataDir: dataDir, JWTSecret: os.Getenv("SVC_JWT_SECRET")}, newLogger(slog.LevelWarn))
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		return fmt.Errorf("node not ready: %w", err)
	}
	if _, _, err := st.Auth.Admins().CreateOwner(ctx, email, password); err != nil {
		return fmt.Errorf("create admin: %s", describe(err))
	}
	fmt.Printf("admin %s created (owner)\n", email)
	return nil
}
