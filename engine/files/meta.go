package files

import (
	"database/sql"
	"errors"
	"strings"

	"svcd/fsm"
)

// FileObject is SPEC.md's file object: what an upload answers.
type FileObject struct {
	ID           string `json:"id"`
	Filename     string `json:"filename"`
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
}

// fileMeta is a stored file as its command carries it and its row keeps
// it: resolved before proposing (name, digest, time), applied as is.
type fileMeta struct {
	Name     string `json:"name"` // <uuid>.<ext>
	Field    string `json:"field"`
	Original string `json:"original"`
	Size     int64  `json:"size"`
	MIME     string `json:"mime"`
	SHA256   string `json:"sha256"`
	Driver   string `json:"driver"`
}

// object is the file object of m.
func (m fileMeta) object() FileObject {
	id, _, _ := strings.Cut(m.Name, ".")
	return FileObject{ID: id, Filename: m.Name, OriginalName: m.Original, Size: m.Size, MimeType: m.MIME}
}

// fileRow is a stored file's metadata as read back.
type fileRow struct {
	fileMeta
	CollectionID string
	RecordID     string
	FieldID      string
	Created      int64
}

// scanner is one row (*sql.Row).
type scanner interface{ Scan(dest ...any) error }

// queryRow is a reader's QueryRow.
type queryRow func(q string, args ...any) scanner

// readerRow adapts a replica read.
func readerRow(r *fsm.Reader) queryRow {
	return func(q string, args ...any) scanner { return r.QueryRow(q, args...) }
}

const fileCols = `name, collection_id, record_id, field_id, original_name, size, mime, sha256, driver, created`

// readFile reads the metadata of stored name (nil when there is none).
func readFile(q queryRow, name string) (*fileRow, error) {
	var r fileRow
	err := q(`SELECT `+fileCols+` FROM _svc_files WHERE name = ?`, name).Scan(&r.Name, &r.CollectionID, &r.RecordID,
		&r.FieldID, &r.Original, &r.Size, &r.MIME, &r.SHA256, &r.Driver, &r.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.Field = r.FieldID
	return &r, nil
}

// insertFiles writes the metadata rows of files added to record id of
// collection coll at now.
func insertFiles(tx *fsm.Tx, coll, id string, files []fileMeta, now int64) error {
	for _, f := range files {
		if _, err := tx.Exec(`INSERT INTO _svc_files (`+fileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.Name, coll, id, f.Field, f.Original, f.Size, f.MIME, f.SHA256, f.Driver, now); err != nil {
			return err
		}
	}
	return nil
}
