package pbcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// PocketBase's batch (pb:apis/batch.go): POST /api/batch with
// {"requests": [{method, url, body}]}, as JSON or, as the SDK always sends
// it, multipart with the JSON in a "@jsonPayload" part. It runs as
// /api/v1/batch does (one log command, one transaction, all or nothing)
// and answers [{status, body}] with PocketBase's record JSON.

// Batcher is what the batch route needs: api's batch runner (its parser,
// which accepts PocketBase's record URLs, scopes and request info), for
// caller p on a JSON body {"requests": [...]}.
type Batcher interface {
	// The index is the batch's Raft log index (0 for a batch that only
	// reads), answered as X-Svc-Index.
	RunBatch(r *http.Request, p engine.Principal, body []byte) ([]BatchAnswer, uint64, error)
}

// BatchAnswer is one entry's result: the HTTP status svcd gives it, the
// collection it wrote and the record's JSON (nil for a delete).
type BatchAnswer struct {
	Status     int
	Collection string
	Body       json.RawMessage
}

// maxBatchBody bounds a batch's JSON when Deps.ReadBody is not used (a
// multipart batch).
const maxBatchBody = 32 << 20

// mountBatch serves POST /api/batch.
func mountBatch(r chi.Router, d *Deps) {
	r.Post("/api/batch", d.batch)
}

// batchEntry is one request of a batch as PocketBase's SDK sends it.
type batchEntry struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Body    map[string]any    `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func (d *Deps) batch(w http.ResponseWriter, r *http.Request) {
	raw, err := d.batchBody(w, r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var in struct {
		Requests []batchEntry `json:"requests"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, "Failed to read the submitted batch data.", nil))
		return
	}
	if len(in.Requests) == 0 {
		WriteError(w, r, NewError(http.StatusBadRequest, "Invalid batch request data.", map[string]any{
			"requests": FieldError{Code: "validation_required", Message: "Cannot be blank."}}))
		return
	}
	p := d.recordCaller(r)
	body, err := json.Marshal(in)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	answers, idx, err := d.Batch.RunBatch(r, p, body)
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, batchFailure(err))
		return
	}
	out := make([]map[string]any, len(answers))
	for i, a := range answers {
		status := a.Status
		if status == http.StatusCreated {
			status = http.StatusOK // PocketBase answers a create with 200
		}
		var rec any
		if len(a.Body) > 0 && !bytes.Equal(bytes.TrimSpace(a.Body), []byte("null")) {
			c, err := d.Catalog.Collection(a.Collection)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			if rec, err = RecordOut(d.Catalog, c, a.Body, p); err != nil {
				WriteError(w, r, err)
				return
			}
		}
		out[i] = map[string]any{"status": status, "body": rec}
	}
	WriteJSON(w, http.StatusOK, out)
}

// batchBody is the batch's JSON: the body itself, or a multipart body's
// "@jsonPayload" part. File parts (requests.N.field) are refused: files
// in a batch are not supported (docs/pocketbase-files.md).
func (d *Deps) batchBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if d.ReadBody != nil {
			return d.ReadBody(w, r)
		}
		return io.ReadAll(io.LimitReader(r.Body, maxBatchBody))
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, NewError(http.StatusBadRequest, "Failed to read the submitted batch data.", nil)
	}
	var payload []byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, NewError(http.StatusBadRequest, "Failed to read the submitted batch data.", nil)
		}
		name := part.FormName()
		if part.FileName() != "" {
			key := strings.TrimPrefix(name, "requests.")
			i, _, _ := strings.Cut(key, ".")
			return nil, NewError(http.StatusBadRequest, "Batch transaction failed.", map[string]any{
				"requests": map[string]any{i: FieldError{Code: "batch_files_unsupported",
					Message: "Files in batch requests are not supported; upload them with a record create or update."}}})
		}
		if name != "@jsonPayload" {
			continue
		}
		if payload, err = io.ReadAll(io.LimitReader(part, maxBatchBody+1)); err != nil {
			return nil, NewError(http.StatusBadRequest, "Failed to read the submitted batch data.", nil)
		}
		if len(payload) > maxBatchBody {
			return nil, NewError(http.StatusRequestEntityTooLarge, "", nil)
		}
	}
	if payload == nil {
		return nil, NewError(http.StatusBadRequest, "Failed to read the submitted batch data.", nil)
	}
	return payload, nil
}

// batchFailure is a batch's error as PocketBase answers it: 400 "Batch
// transaction failed." with data.requests.<index> naming the failed entry
// and holding its own error as response.
func batchFailure(err error) error {
	e := engine.AsError(err)
	if e == nil {
		return err
	}
	var index int
	if _, scanErr := fmt.Sscanf(e.Message, "batch failed at request %d:", &index); scanErr != nil {
		pe := FromEngine(err)
		if pe.Status >= 500 || pe.Status == http.StatusTooManyRequests || pe.Status == http.StatusRequestEntityTooLarge {
			return pe
		}
		return NewError(http.StatusBadRequest, "Invalid batch request data.", pe.Data)
	}
	_, cause, _ := strings.Cut(e.Message, ": ")
	inner := &engine.Error{Kind: e.Kind, Message: cause, Details: e.Details, ETag: e.ETag, RetryAfter: e.RetryAfter}
	resp := FromEngine(WriteFailure(inner, failedMessage(inner)))
	if resp.Status >= 500 {
		return resp
	}
	return NewError(http.StatusBadRequest, "Batch transaction failed.", map[string]any{
		"requests": map[string]any{strconv.Itoa(index): map[string]any{
			"code": "batch_request_failed", "message": "Batch request failed.", "response": resp}}})
}

// failedMessage: a validation failure inside a batch is reported with
// PocketBase's generic validation message (the entry's method is not
// known here).
func failedMessage(e *engine.Error) string {
	if e.Kind == engine.KindValidation {
		return MsgValidation
	}
	return ""
}
