package backup

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"svcd/engine"
	"svcd/fsm"
)

// An upload is received into a temporary file of Dir, decompressed when
// it is gzip (a backup taken with ?gzip=1 or --gzip restores as it is), a
// snapshot's checksum trailer verified and dropped when it has one, then
// checked as a database of this service before anything else happens.

// upload is a received, checked upload.
type upload struct {
	path          string
	sha256        string
	size          int64
	index         uint64 // the applied index it holds
	schemaVersion int64
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// receive writes r to a temporary file and checks it. The caller removes
// u.path.
func (b *Backups) receive(r io.Reader) (*upload, error) {
	f, err := os.CreateTemp(b.dir, uploadPrefix+"*.part")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	path := f.Name()
	f.Close()
	u, err := b.receiveTo(path, r)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return u, nil
}

func (b *Backups) receiveTo(path string, r io.Reader) (*upload, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return nil, badFile("The upload is empty: send the database file as the body (or as the multipart field file)")
	}
	var src io.Reader = br
	if len(head) == 2 && head[0] == gzipMagic[0] && head[1] == gzipMagic[1] {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, badFile("The upload looks like gzip but is not: " + err.Error())
		}
		defer zr.Close()
		src = zr
	}
	if _, err := fsm.ReceiveFile(path, src); err != nil {
		if errors.Is(err, fsm.ErrSnapshotDamaged) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
			return nil, badFile("The upload is not an intact database file: " + err.Error())
		}
		return nil, err
	}
	info, err := fsm.InspectFile(path)
	if errors.Is(err, fsm.ErrNotDatabase) {
		return nil, badFile("The upload is not an intact SQLite database: " + err.Error())
	}
	if err != nil {
		return nil, err
	}
	v, versioned := info.Meta["schema_version"]
	if info.Meta == nil || !versioned || !info.Tables["_svc_collections"] || !info.Tables["_svc_settings"] {
		return nil, badFile("The upload is an SQLite database, but not one of svcd: it has no svcd tables (_svc_meta with a schema version, _svc_collections, _svc_settings)")
	}
	if v > b.core.SchemaVersion() {
		return nil, &engine.Error{Kind: engine.KindValidation, Message: "Validation failed", Details: map[string]any{
			"file": fmt.Sprintf("The backup's internal schema version %d is newer than this svcd's %d: restore it with a newer svcd", v, b.core.SchemaVersion()),
		}}
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return &upload{path: path, sha256: sum, size: fi.Size(), index: uint64(info.Meta["applied_index"]), schemaVersion: v}, nil
}

// badFile is the 422 of an upload that cannot be restored.
func badFile(msg string) error {
	return engine.FieldError("file", msg)
}
