// Package upgrade holds the rolling-upgrade test (make test-upgrade): a
// three-node cluster started with the previous release's binary (the
// commit pinned in the PREVIOUS file, built once and cached under
// ~/.cache/svcd/upgrade) is upgraded one node at a time to the binary of
// this work tree, followers first and the leader last, while clients keep
// writing through every node. At the end every acknowledged write is on
// every node and the nodes' digests are equal.
//
// The test runs only when SVC_UPGRADE_TEST=1 is set (make test-upgrade
// sets it), so a plain `go test ./...` stays as fast as it was:
//
//	SVC_UPGRADE_TEST=1 go test -tags sqlite_fts5 -count=1 -v ./jepsen/upgrade
//
// It needs the pinned commit in the clone (a shallow clone fails with a
// message saying so). docs/operations.md ("Rolling upgrades") gives the
// procedure the test follows and the rules while versions are mixed.
package upgrade
