package files

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Stats is the admin summary of stored files (GET /admin/files): where
// new files go and, per collection and file field, how many there are.
// It is read from the files' metadata rows on this node's replica; the
// bucket is never listed.
type Stats struct {
	Storage StorageInfo  `json:"storage"`
	Fields  []FieldStats `json:"fields"`
	// Totals over every field.
	Records int   `json:"records"`
	Files   int   `json:"files"`
	Bytes   int64 `json:"bytes"`
}

// StorageInfo is the storage driver new uploads use, without
// credentials: for S3 its bucket and endpoint.
type StorageInfo struct {
	Driver   string `json:"driver"`
	Bucket   string `json:"bucket,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Region   string `json:"region,omitempty"`
	// Redirect is storage.redirect_downloads (S3 answers 302 to a
	// presigned URL).
	Redirect bool `json:"redirectDownloads"`
}

// FieldStats counts the stored files of one file field.
type FieldStats struct {
	Collection string `json:"collection"`
	Field      string `json:"field"`
	// Records is how many records have at least one file in the field.
	Records int   `json:"records"`
	Files   int   `json:"files"`
	Bytes   int64 `json:"bytes"`
}

// Stats sums the stored files per collection and file field, by
// collection then field name.
func (m *Files) Stats(ctx context.Context) (*Stats, error) {
	out := &Stats{Storage: m.storageInfo(), Fields: []FieldStats{}}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT collection_id, field_id, count(DISTINCT record_id), count(*), coalesce(sum(size), 0)
			FROM _svc_files GROUP BY collection_id, field_id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var collID, fieldID string
			var s FieldStats
			if err := rows.Scan(&collID, &fieldID, &s.Records, &s.Files, &s.Bytes); err != nil {
				return err
			}
			ci := m.core.Coll(collID)
			if ci == nil {
				continue // a collection dropped after this read began
			}
			f, _ := fieldByID(ci, fieldID)
			if f == nil {
				continue
			}
			s.Collection, s.Field = ci.Name, f.Name
			out.Fields = append(out.Fields, s)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Records over every field: a record with files in two fields
		// counts once.
		return r.QueryRow(`SELECT count(*) FROM (SELECT DISTINCT collection_id, record_id FROM _svc_files)`).Scan(&out.Records)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out.Fields, func(a, b FieldStats) int {
		return cmp.Or(cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Field, b.Field))
	})
	for _, s := range out.Fields {
		out.Files += s.Files
		out.Bytes += s.Bytes
	}
	return out, nil
}

// storageInfo reads the storage settings, leaving out credentials.
func (m *Files) storageInfo() StorageInfo {
	d := strings.ToLower(strings.TrimSpace(m.core.Setting(settingDriver)))
	if d == "" {
		d = "local"
	}
	info := StorageInfo{Driver: d, Redirect: m.core.SettingBool(settingRedirect)}
	if d == "s3" {
		info.Bucket = m.core.Setting("s3.bucket")
		info.Endpoint = m.core.Setting("s3.endpoint")
		info.Region = m.core.Setting("s3.region")
	}
	return info
}

// StoredFile is one stored file as the admin listing shows it.
type StoredFile struct {
	Collection   string `json:"collection"`
	RecordID     string `json:"recordId"`
	Field        string `json:"field"`
	Filename     string `json:"filename"`
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
	Driver       string `json:"driver"`
	Created      int64  `json:"created"`
	// Protected is the field's protected flag: downloading needs a file
	// token.
	Protected bool `json:"protected"`
}

// FileList is one page of a collection's files: SPEC.md's list shape.
type FileList struct {
	Data       []StoredFile `json:"data"`
	Page       int          `json:"page"`
	PerPage    int          `json:"perPage"`
	TotalItems int          `json:"totalItems"`
	TotalPages int          `json:"totalPages"`
}

// fileSorts are the sort values List accepts and their ORDER BY.
var fileSorts = map[string]string{
	// rowid breaks ties of a second in the order the rows were written.
	"created": "created ASC, rowid ASC", "-created": "created DESC, rowid DESC",
	"size": "size ASC, name ASC", "-size": "size DESC, name ASC",
	"filename": "name ASC", "-filename": "name DESC",
}

// List answers page (from 1) of perPage (engine.DefaultPerPage when 0,
// at most engine.MaxPerPage) of the files of collection coll (name or
// id), by sort (created, size, filename, "-" for descending; "" is
// -created: newest first).
func (m *Files) List(ctx context.Context, coll string, page, perPage int, sort string) (*FileList, error) {
	ci := m.core.Coll(coll)
	if ci == nil {
		return nil, engine.ErrNotFound
	}
	if sort == "" {
		sort = "-created"
	}
	order, ok := fileSorts[sort]
	if !ok {
		return nil, &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid query parameters",
			Details: map[string]any{"sort": "must be created, size or filename, with - for descending"}}
	}
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = engine.DefaultPerPage
	}
	perPage = min(perPage, engine.MaxPerPage)
	out := &FileList{Data: []StoredFile{}, Page: page, PerPage: perPage}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		if err := r.QueryRow(`SELECT count(*) FROM _svc_files WHERE collection_id = ?`, ci.ID).Scan(&out.TotalItems); err != nil {
			return err
		}
		rows, err := r.Query(`SELECT record_id, field_id, name, original_name, size, mime, driver, created
			FROM _svc_files WHERE collection_id = ? ORDER BY `+order+` LIMIT ? OFFSET ?`, ci.ID, perPage, (page-1)*perPage)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s StoredFile
			var fieldID string
			if err := rows.Scan(&s.RecordID, &fieldID, &s.Filename, &s.OriginalName, &s.Size, &s.MimeType, &s.Driver, &s.Created); err != nil {
				return err
			}
			s.Collection, s.Field = ci.Name, fieldID
			if f, _ := fieldByID(ci, fieldID); f != nil {
				s.Field, s.Protected = f.Name, f.Protected
			}
			out.Data = append(out.Data, s)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out.TotalPages = (out.TotalItems + perPage - 1) / perPage
	return out, nil
}
