package fsm

// SnapshotTrailerSize is the size of the checksum trailer that ends a
// snapshot stream, for tests that strip it (an older binary's snapshot).
const SnapshotTrailerSize = snapshotTrailerSize
