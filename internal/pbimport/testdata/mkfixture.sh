#!/bin/sh
# Makes pb_data_v0.40.4.tar.gz with a real PocketBase v0.40.4 (its Go API,
# mkfixture/main.go). PocketBase v0.40 needs Go 1.27: the go command
# downloads that toolchain from the module proxy (about 76 MB) the first
# time. Run from this directory: sh mkfixture.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/mkfixture" && GOTOOLCHAIN=go1.27.3 GOFLAGS=-mod=mod go run . -out "$tmp/pb_data")
tar -C "$tmp" --owner=0 --group=0 --numeric-owner --mtime=2026-01-01 --sort=name \
	-czf "$here/pb_data_v0.40.4.tar.gz" pb_data/data.db pb_data/storage
echo "wrote $here/pb_data_v0.40.4.tar.gz"
