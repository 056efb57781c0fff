// Package blobs holds the blob stores of engine/files (the module owns the
// interface: files.BlobStore), built on gocloud.dev/blob: fileblob under
// the node's data directory for the local driver, s3blob (AWS SDK v2) for
// S3-compatible storage. Stores resolves a driver name to its store as the
// current settings configure it, and rebuilds the S3 store when its
// settings change.
//
// It lives beside the consensus layer, not in the engine, because
// gocloud.dev/blob speaks HTTP (the engine never imports net/http), and
// because the cluster's durability for the local driver belongs here:
// Replicated wraps the local store so that Put returns only once a
// majority of the voters hold the bytes (streamed to the peers over the
// cluster's authenticated connections, wire.go), Open fetches a blob this
// node lacks from a peer, and Repair copies in the background what the
// metadata names and this node lacks; engine/files does not change.
package blobs
