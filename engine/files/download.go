package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
)

// DownloadRequest is one GET /files/:filename.
type DownloadRequest struct {
	Name  string // the stored name
	Token string // the token query parameter ("" when none)
	IP    string // the client's address (bindTokenIp)
	Thumb string // the thumb query parameter
	Fit   string // the fit query parameter
	// Head is a HEAD request: it reveals the headers only, so it spends
	// no one-time token.
	Head bool
	// AppData turns a principal into the caller of an app-data read as
	// the HTTP layer's role table has it (an admin role that does not
	// reach app data reads as anonymous); nil keeps it.
	AppData func(engine.Principal) engine.Principal
	// Collection and RecordID, when set, are where the caller says the
	// file is (PocketBase's /api/files/{collection}/{record}/{file}): a
	// file of another record is not found. Collection is a name or id.
	Collection string
	RecordID   string
}

// Download is a file the caller may fetch, open.
type Download struct {
	File       FileObject
	Collection string // name
	RecordID   string
	Field      string
	SHA256     string
	Created    int64
	// Blob is the bytes (or the thumbnail's): the caller closes it.
	Blob Blob
	// MIME is the type served (a thumbnail's may differ from the file's).
	MIME string
	// Thumbnail is set when Blob is a thumbnail.
	Thumbnail bool
	// Who fetched: the caller, or the token's subject.
	Who engine.Principal
	// Via is "token" or "rule".
	Via string
	// Audit asks for a files.download audit row (auditDownloads).
	Audit bool
	// Public is set when anyone may fetch the file without credentials
	// (shared caches may keep it); NoStore when nothing may keep it (a
	// one-time token's).
	Public  bool
	NoStore bool
	// Redirectable is false for fields whose answers must come from this
	// service (oneTimeToken, bindTokenIp: SPEC.md Files rule 5).
	Redirectable bool
	// RedirectURL, when set, is where the client fetches the bytes
	// (storage.redirect_downloads on S3); Blob is nil then.
	RedirectURL string
}

// redirectTTL is how long a presigned download URL stays valid.
const redirectTTL = 5 * time.Minute

// Download decides whether p (or the subject of req.Token) may fetch the
// stored file req.Name and opens it: the collection's view rule AND the
// field's viewRule (absent: no condition; "": admins only), requireAuth,
// protected (no token: 401 'Token required'), bindTokenIp (another
// address: 403) and oneTimeToken (a replay: 410). A file the caller may
// not see is 404, as its record would be.
func (m *Files) Download(ctx context.Context, p engine.Principal, req DownloadRequest) (*Download, error) {
	meta, err := m.lookup(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	ci := m.core.Coll(meta.CollectionID)
	if ci == nil {
		return nil, errNoFile
	}
	f, _ := fieldByID(ci, meta.FieldID)
	if f == nil {
		return nil, errNoFile
	}
	if req.Collection != "" && req.Collection != ci.Name && req.Collection != ci.ID || req.RecordID != "" && req.RecordID != meta.RecordID {
		return nil, errNoFile
	}
	who, via := p, "rule"
	var tok *token.Claims
	if req.Token != "" {
		q, c, err := m.tokenSubject(ctx, req.Token, req.Name, p.Request)
		if err != nil {
			return nil, err
		}
		if c.File == AnyFile && (f.OneTimeToken || f.BindTokenIP) {
			return nil, errTokenOtherFile
		}
		if f.BindTokenIP && c.IP != req.IP {
			return nil, errTokenElsewhere
		}
		who, via, tok = q, "token", c
	} else if f.Protected {
		return nil, errTokenRequired
	}
	if req.AppData != nil {
		who = req.AppData(who)
	}
	if err := m.mayDownload(ctx, who, ci, f, meta.RecordID); err != nil {
		return nil, err
	}
	if tok != nil && f.OneTimeToken && !req.Head {
		if err := m.spend(ctx, tok); err != nil {
			return nil, err
		}
	}
	d := &Download{
		File: meta.object(), Collection: ci.Name, RecordID: meta.RecordID, Field: f.Name, SHA256: meta.SHA256,
		Created: meta.Created, MIME: meta.MIME, Who: who, Via: via, Audit: f.AuditDownloads,
		Public: ci.ViewRule != nil && strings.TrimSpace(*ci.ViewRule) == "" && f.FileViewRule == nil &&
			!f.RequireAuth && !f.Protected && !f.OneTimeToken && !f.BindTokenIP,
		NoStore: f.OneTimeToken,
		// Thumbnail requests are served here too, original or not.
		Redirectable: !f.OneTimeToken && !f.BindTokenIP && req.Thumb == "",
	}
	store, err := m.stores.Store(ctx, meta.Driver)
	if err != nil {
		return nil, storageUnavailable(meta.Driver)
	}
	if req.Thumb != "" && m.thumbs != nil {
		src := ThumbSource{Name: meta.Name, MIME: meta.MIME, Size: meta.Size, Open: func(ctx context.Context) (io.ReadCloser, error) {
			return m.openBlob(ctx, store, meta)
		}}
		b, mimeType, err := m.thumbs.Thumbnail(ctx, src, req.Thumb, req.Fit)
		if err != nil {
			return nil, err
		}
		if b != nil {
			d.Blob, d.MIME, d.Thumbnail, d.Redirectable = b, mimeType, true, false
			return d, nil
		}
	}
	if signer, ok := store.(URLSigner); ok && d.Redirectable && m.core.SettingBool(settingRedirect) {
		u, err := signer.DownloadURL(ctx, meta.Name, redirectTTL)
		if err == nil {
			d.RedirectURL = u
			return d, nil
		}
		m.log.Warn("files: no redirect URL; serving the bytes", "name", meta.Name, "err", err)
	}
	b, err := m.openBlob(ctx, store, meta)
	if err != nil {
		return nil, err
	}
	d.Blob = b
	return d, nil
}

// openBlob opens the bytes of meta in store: 404 when the store has none,
// 503 when the store fails (S3 unreachable or refusing the credentials),
// which the log explains.
func (m *Files) openBlob(ctx context.Context, store BlobStore, meta *fileRow) (Blob, error) {
	b, err := store.Open(ctx, meta.Name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &engine.Error{Kind: engine.KindNotFound, Message: "The file's content is missing from storage (" + meta.Driver + ")"}
	case err != nil && engine.AsError(err) == nil && ctx.Err() == nil:
		m.log.Warn("files: storage failed a read", "driver", meta.Driver, "name", meta.Name, "err", err)
		return nil, storageUnavailable(meta.Driver)
	case err != nil:
		return nil, err
	}
	return b, nil
}

// storageUnavailable answers a request whose storage driver is not
// configured or fails.
func storageUnavailable(driver string) *engine.Error {
	return &engine.Error{Kind: engine.KindUnavailable, Message: "File storage (" + driver + ") is not available", RetryAfter: 5}
}

// lookup reads the metadata of stored name on this replica.
func (m *Files) lookup(ctx context.Context, name string) (*fileRow, error) {
	var meta *fileRow
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		meta, err = readFile(readerRow(r), name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, errNoFile
	}
	return meta, nil
}

// mayDownload decides p's access to the files of field f of record id of
// ci (the token requirement aside): requireAuth, the collection's view
// rule (the record must be visible: 404 otherwise; an admin-only
// collection is 403), then the field's viewRule (403).
func (m *Files) mayDownload(ctx context.Context, p engine.Principal, ci *engine.Coll, f *engine.FieldInfo, id string) error {
	if f.RequireAuth && p.Kind == engine.Anonymous {
		return errAuthRequired
	}
	return m.core.ReadAs(ctx, p, func(rd *engine.Reading) error {
		if _, err := rd.Record(ci, id, "id", ""); err != nil {
			return err
		}
		if rd.Bypass(ci) || f.FileViewRule == nil {
			return nil
		}
		if adminOnlyRule(f.FileViewRule) {
			return engine.ErrForbidden
		}
		ok, err := rd.RuleHolds(ci, f.FileViewRule, false, engine.ReadEnv(p, m.core.Now().Unix()), id)
		if err != nil {
			return err
		}
		if !ok {
			return engine.ErrForbidden
		}
		return nil
	})
}
