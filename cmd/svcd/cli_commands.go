package main

import (
	"flag"
	"io"
	"os"
)

// commands are svcd's commands, in the order `svcd help` lists them.
func commands() []*command {
	return []*command{
		{
			name: "serve", args: "[flags]",
			summary: "run a node (single-node mode by default)",
			about: `Runs a node. With no cluster flags it is a single node: a one-voter Raft
cluster that bootstraps itself, its data in --dir, HTTP on --http. With
--raft-addr it is a cluster member: --bootstrap forms a new cluster,
--join joins one; SVC_CLUSTER_KEY, the same on every member, is required.
A restarted member rejoins by itself from its data directory.

SIGTERM or SIGINT drains it: in-flight requests get 10 s, a leader hands
its leadership over, then Raft and SQLite close cleanly. Logs go to stderr
(--log-format); the level is SVC_LOG_LEVEL. docs/configuration.md lists
every variable, docs/cluster.md the cluster flags.`,
			examples: `svcd serve
svcd serve --http 127.0.0.1:9000 --dir /tmp/svc
SVC_CLUSTER_KEY=k svcd serve --node-id n1 --raft-addr 10.0.0.1:8300 --bootstrap
SVC_CLUSTER_KEY=k svcd serve --node-id n2 --raft-addr 10.0.0.2:8300 --join http://10.0.0.1:8090`,
			flags: func() *flag.FlagSet { return serveFlagSet(&config{}) },
			run:   runServe,
		},
		{
			name: "cluster", args: "[--nodes N] [flags]",
			summary: "N local nodes, one Raft cluster, one shared HTTP port",
			about: `Runs N nodes on this machine as child processes of this one: one Raft
cluster, all serving the same HTTP port (SO_REUSEPORT). Node i is named
node<i>, keeps its data in DIR/node<i> and speaks Raft on 127.0.0.1 at
raft-port+i-1; the cluster key is generated into DIR/cluster.key. A node
that exits is started again; SIGTERM or SIGINT drains every node. Every
log line names the node that wrote it.`,
			examples: `svcd cluster --nodes 3
svcd cluster --nodes 3 --http 127.0.0.1:9000 --dir /tmp/three --raft-port 19400
svcd admin create --dir ./svc_data/node1 you@example.com 'a-long-password'`,
			flags: func() *flag.FlagSet { return clusterFlagSet(&clusterOptions{}) },
			run:   runCluster,
		},
		{
			name: "admin create", args: "EMAIL PASSWORD [--dir DIR]",
			summary: "create an owner admin",
			about: `Creates an owner admin. When a node runs on DIR it asks that node, through
the admin socket in DIR (so only the account that owns the data can); else
it starts the node briefly and writes through its Raft log. The password
must satisfy the password policy (docs/auth.md). A password that begins
with "-" goes after "--".`,
			examples: `svcd admin create you@example.com 'a-long-password'
svcd admin create you@example.com 'a-long-password' --dir /var/lib/svcd
svcd admin create --dir /var/lib/svcd -- you@example.com '-starts-with-a-dash'`,
			flags: func() *flag.FlagSet { var d string; return dirFlagSet("admin create", &d) },
			run:   runAdminCreate,
		},
		{
			name: "backup", args: "--to PATH|s3://bucket/key [--gzip] [--dir DIR | --url URL]",
			summary: "copy a live node's database to a file or an S3 object",
			about: `Copies the database of a running node: one SQLite file holding the whole
state at one log index, taken from a read transaction while writes go on
(docs/operations.md, "Backups"). The node on --dir is asked through its
admin socket (only the account that owns the data can); with --url (or
SVC_URL) the node at that URL is asked, with an owner's token in SVC_TOKEN.
--to - writes to standard output. For s3://bucket/key the S3 server is the
one of the node's s3.* settings, or SVC_S3_ENDPOINT, SVC_S3_REGION,
SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY when set. Restore the
file with POST /api/v1/admin/restore. The key files (jwt.key,
encryption.key) are not in the database: back them up too.`,
			examples: `svcd backup --to /backups/svcd-$(date -u +%Y%m%dT%H%M%SZ).db
svcd backup --dir /var/lib/svcd --to s3://my-backups/svcd/nightly.db.gz --gzip
SVC_TOKEN=$TOKEN svcd backup --url http://10.0.0.1:8090 --to - | gzip > backup.db.gz`,
			flags: func() *flag.FlagSet { return backupFlagSet(&backupOptions{}) },
			run:   runBackup,
		},
		{
			name: "import-pocketbase", args: "[--url URL] [--report FILE] [--dry-run] PB_DATA",
			summary: "import a PocketBase app's collections, records, users and files",
			about: `Reads a PocketBase data directory (pb_data, or a .tar.gz of one; it is
copied first and never written) and carries it to the node at --url (or
SVC_URL), with an owner's token in SVC_TOKEN, through the node's API and
so through the cluster's log: collections translated (rules, fields,
indexes; a name svcd reserves is renamed), then records with their ids,
times and password hashes (users sign in with their PocketBase password),
then files. Collections and records that exist are skipped, so running
it again changes nothing. It prints what it did and everything it could
not carry over as it was (docs/pocketbase.md); it exits 1 when a record
or a file failed.`,
			examples: `SVC_TOKEN=$TOKEN svcd import-pocketbase --dry-run ./pb_data
SVC_TOKEN=$TOKEN svcd import-pocketbase --url http://10.0.0.1:8090 --report import.json ./pb_data`,
			flags: func() *flag.FlagSet { return importPBFlagSet(&importPBOptions{}) },
			run:   runImportPocketBase,
		},
		{
			name: "mcp", args: "[--read-only] [--url URL]",
			summary: "stdio bridge to a node's agent protocol (MCP)",
			about: `Speaks the Model Context Protocol on stdin and stdout (newline-delimited
JSON-RPC) for a desktop MCP client, and forwards every message to the
agent protocol of the node at SVC_URL (default http://127.0.0.1:$SVC_PORT),
authorized by the API token in SVC_MCP_TOKEN (it needs an mcp:* scope).
--read-only removes the tools that write and refuses SQL writes, whatever
the token allows. docs/mcp.md has a desktop client's configuration.`,
			examples: `SVC_MCP_TOKEN=svcat_... svcd mcp
SVC_MCP_TOKEN=svcat_... svcd mcp --read-only --url https://api.example.com`,
			flags: func() *flag.FlagSet { return mcpFlagSet(&mcpOptions{}) },
			run:   runMCP,
		},
		{
			name: "rotate-key", args: "[--dir DIR]",
			summary: "re-encrypt secrets under the current SVC_ENCRYPTION_KEY",
			about: `Re-encrypts every secret setting and encrypted field value under the
current SVC_ENCRYPTION_KEY, in one replicated command. Run it after every
node was restarted with the new key in SVC_ENCRYPTION_KEY and the previous
one in SVC_ENCRYPTION_KEY_OLD. It asks the node running on DIR through its
admin socket, or starts this one briefly. Safe to run again
(docs/configuration.md, "Encryption at rest").`,
			examples: `SVC_ENCRYPTION_KEY=$NEW SVC_ENCRYPTION_KEY_OLD=$OLD svcd rotate-key
svcd rotate-key --dir /var/lib/svcd`,
			flags: func() *flag.FlagSet { var d string; return dirFlagSet("rotate-key", &d) },
			run:   runRotateKey,
		},
		{
			name: "repair verify", summary: "check a stopped node's Raft log, snapshot and database",
			text: verifyHelp, run: runRepairVerify,
			examples: `svcd repair verify
svcd repair verify --dir /var/lib/svcd`,
		},
		{
			name: "repair rebuild-db", summary: "rebuild a damaged database from the node's Raft state",
			text: rebuildHelp, run: runRepairRebuildDB,
			examples: `svcd repair rebuild-db --dir /var/lib/svcd && svcd serve --dir /var/lib/svcd`,
		},
		{
			name: "repair reseed", summary: "give a damaged cluster member a fresh copy of the state",
			text: reseedHelp, run: runRepairReseed,
			examples: `svcd repair reseed --dir /var/lib/svcd
svcd repair reseed --dir /var/lib/svcd --join http://10.0.0.2:8090,http://10.0.0.3:8090`,
		},
		{
			name: "repair recover", summary: "make the survivors of a cluster that lost its quorum a new cluster",
			text: recoverHelp, run: runRepairRecover,
			examples: `svcd repair recover --dir /var/lib/svcd --members node1=10.0.0.1:8300
svcd repair recover --dir /var/lib/svcd --members node1=10.0.0.1:8300,node2=10.0.0.2:8300`,
		},
		{
			name: "version", args: "",
			summary: "print the version, and the revision and time it was built from",
			about: `Prints the version (set at build time with -ldflags "-X main.version=V",
else the module's), the VCS revision and commit time the binary was built
from, whether the work tree had changes, and the Go version.`,
			examples: `svcd version
go build -tags sqlite_fts5 -ldflags "-X main.version=v1.2.0" -o bin/svcd ./cmd/svcd && bin/svcd version`,
			run: func(args []string) error { return runVersion(args, os.Stdout) },
		},
	}
}

// runVersion is svcd version.
func runVersion(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	readBuildInfo().print(w)
	return nil
}
