package pbimport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// Target is the svcd node an import writes to, over its HTTP API, as an
// owner (an admin session or an API token with the admin scope): every
// write goes through the cluster's log like any other.
type Target struct {
	URL   string // http://host:port
	Token string
	HTTP  *http.Client
}

// APIError is an answer of the node in svcd's error envelope.
type APIError struct {
	Status  int
	Message string         `json:"error"`
	Details map[string]any `json:"details"`
}

func (e *APIError) Error() string {
	if len(e.Details) > 0 {
		d, _ := json.Marshal(e.Details)
		return fmt.Sprintf("%d %s %s", e.Status, e.Message, d)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (t *Target) client() *http.Client {
	if t.HTTP != nil {
		return t.HTTP
	}
	return http.DefaultClient
}

// Do sends a JSON request to path (under /api/v1) and decodes the
// answer's data into out (when not nil).
func (t *Target) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(t.URL, "/")+"/api/v1"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return t.send(req, out)
}

// UploadFile is one file of an upload.
type UploadFile struct {
	Name string
	Data []byte
}

// Upload adds files, in order, to field of record id of coll (one
// request, as a client uploading several at once) and answers the names
// the node stored them under.
func (t *Target) Upload(ctx context.Context, coll, id, field string, files []UploadFile) ([]string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range files {
		fw, err := mw.CreateFormFile("file", f.Name)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	path := "/api/v1/files/" + url.PathEscape(coll) + "/" + url.PathEscape(id) + "/" + url.PathEscape(field)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.URL, "/")+path, &b)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var raw json.RawMessage
	if err := t.send(req, &raw); err != nil {
		return nil, err
	}
	type stored struct {
		Filename string `json:"filename"`
	}
	var many []stored
	if err := json.Unmarshal(raw, &many); err != nil {
		var one stored
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("upload answer %s: %w", raw, err)
		}
		many = []stored{one}
	}
	names := make([]string, len(many))
	for i, m := range many {
		names[i] = m.Filename
	}
	return names, nil
}

func (t *Target) send(req *http.Request, out any) error {
	req.Header.Set("Authorization", "Bearer "+t.Token)
	res, err := t.client().Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		e := &APIError{Status: res.StatusCode}
		if json.Unmarshal(b, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(b))
		}
		return e
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	return json.Unmarshal(env.Data, out)
}
