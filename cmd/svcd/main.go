// Command svcd is the svcd backend: one binary that is a complete backend
// and a Raft-replicated cluster node. `svcd serve` runs a node; other
// subcommands operate on one (see usage).
package main

import (
	"fmt"
	"os"
)

const usage = `svcd: a complete backend in one binary, replicated with Raft.

Usage:
  svcd serve [--http ADDR] [--dir DIR]      run a node (single-node dev mode by default)
  svcd serve --node-id ID --raft-addr HOST:PORT (--bootstrap | --join URL,...)
                                             run a cluster node (needs SVC_CLUSTER_KEY)
  svcd cluster --nodes N [--http ADDR]       N local nodes, one Raft cluster, one shared port
  svcd admin create EMAIL PASSWORD           create an owner admin
  svcd rotate-key                            re-encrypt secrets under the current SVC_ENCRYPTION_KEY
  svcd repair verify|rebuild-db|reseed [--dir DIR]
                                             check or repair a stopped node's files (docs/operations.md)
  svcd version                               print the version

Environment: SVC_DATA_DIR (./svc_data), SVC_PORT (8090), SVC_LOG_LEVEL (info),
SVC_JWT_SECRET, SVC_SETUP_KEY. See README.md and docs/configuration.md.
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(os.Args[2:])
	case "admin":
		err = runAdmin(os.Args[2:])
	case "rotate-key":
		err = runRotateKey(os.Args[2:])
	case "repair":
		err = runRepair(os.Args[2:])
	case "cluster":
		err = runCluster(os.Args[2:])
	case "version", "--version", "-v":
		fmt.Println("svcd", version)
	case "help", "--help", "-h":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "svcd: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcd:", err)
		os.Exit(1)
	}
}
