package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"svcd/cmd/svcd/stack"
)

// dirFlagSet declares the one flag of a command that works on a data
// directory: --dir.
func dirFlagSet(name string, dir *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(dir, "dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory (SVC_DATA_DIR)")
	return fs
}

// quietLog is the log of a command that runs a node briefly (admin
// create, rotate-key): warnings and errors only.
func quietLog() *slog.Logger {
	return newLogger(os.Stderr, logOptions{format: os.Getenv("SVC_LOG_FORMAT"), level: slog.LevelWarn})
}

// runAdminCreate is svcd admin create EMAIL PASSWORD.
func runAdminCreate(args []string) error {
	var dir string
	fs := dirFlagSet("admin create", &dir)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageErrorf("want EMAIL and PASSWORD, got %d argument(s)", fs.NArg())
	}
	email, password := fs.Arg(0), fs.Arg(1)
	dataDir, err := filepath.Abs(dir)
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
	st, err := stack.Open(stack.Config{DataDir: dataDir, JWTSecret: os.Getenv("SVC_JWT_SECRET")}, quietLog())
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
