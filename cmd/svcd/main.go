// Command svcd is the svcd backend: one binary that is a complete backend
// and a Raft-replicated cluster node. `svcd serve` runs a node; other
// commands operate on one. `svcd help` lists them (cli_commands.go).
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
