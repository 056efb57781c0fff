package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// Batcher is what the batch route needs (the engine's core).
type Batcher interface {
	Batch(ctx context.Context, p engine.Principal, ops []engine.BatchOp) (*engine.BatchResult, uint64, error)
}

// mountBatch serves POST /batch: up to 100 record operations applied as one
// log command, in one transaction, all or nothing.
func (s *Server) mountBatch(r chi.Router) {
	r.Post("/batch", s.batch)
}

var batchStatus = map[engine.BatchAction]int{
	engine.BatchCreate: http.StatusCreated,
	engine.BatchList:   http.StatusOK,
	engine.BatchGet:    http.StatusOK,
	engine.BatchUpdate: http.StatusOK,
	engine.BatchDelete: http.StatusNoContent,
	engine.BatchUpsert: http.StatusOK, // 201 when it created (entryStatus)
}

// entryStatus is the status of entry i's answer.
func entryStatus(req batchRequest, item engine.BatchItem) int {
	if item.Created {
		return http.StatusCreated
	}
	return batchStatus[req.Op.Action]
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	reqs, res, idx, err := s.runBatch(r, principal(r), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := append(make([]byte, 0, 64+len(body)*2), `{"data":`...)
	out = appendBatchAnswers(out, reqs, res)
	writeBytes(w, http.StatusOK, append(out, "}\n"...))
}

// runBatch parses a batch body and runs it for caller (scopes checked per
// entry, each entry's request info set): /api/v1/batch and PocketBase's
// /api/batch run through it.
func (s *Server) runBatch(r *http.Request, caller engine.Principal, body []byte) ([]batchRequest, *engine.BatchResult, uint64, error) {
	reqs, ops, err := parseBatchBody(body)
	if err != nil {
		return nil, nil, 0, err
	}
	info := requestInfo(r)
	for i, req := range reqs {
		write := req.Op.Action != engine.BatchList && req.Op.Action != engine.BatchGet
		if !caller.HasScope(req.Op.Collection, write) {
			return nil, nil, 0, engine.BatchError(i, engine.ErrInsufficientScope)
		}
		req.Op.Request = entryInfo(info, req)
	}
	res, idx, err := s.batcher.Batch(r.Context(), batchCaller(caller, reqs), ops)
	return reqs, res, idx, err
}

// appendBatchAnswers appends the data array of a batch's answer:
// [{"status": ..., "body": ...}, ...]. The bodies are the engine's JSON,
// copied as they are (encoding/json would parse and compact each again).
func appendBatchAnswers(buf []byte, reqs []batchRequest, res *engine.BatchResult) []byte {
	buf = append(buf, '[')
	for i, req := range reqs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"status":`...)
		buf = strconv.AppendInt(buf, int64(entryStatus(req, res.Items[i])), 10)
		buf = append(buf, `,"body":`...)
		if b := res.Items[i].Body; len(b) > 0 {
			buf = append(buf, b...)
		} else {
			buf = append(buf, "null"...)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// batchCaller is the caller of a batch's record operations. As on the
// single record routes, an admin whose role does not reach app data is
// treated as anonymous; the role needed is that of the batch's most
// demanding entry, so one batch never mixes admin and anonymous entries.
func batchCaller(p engine.Principal, reqs []batchRequest) engine.Principal {
	if !p.IsAdmin() {
		return p
	}
	for _, req := range reqs {
		if p.Role < requiredRole(req.Method, recordsScope) {
			return engine.Principal{}
		}
	}
	return p
}

// entryInfo is what rules of one entry read of the request: the entry's
// method and query, the batch request's headers.
func entryInfo(batch engine.RequestInfo, req batchRequest) engine.RequestInfo {
	info := engine.RequestInfo{Method: req.Method, Context: batch.Context, Headers: batch.Headers, Query: map[string]string{}}
	for k, v := range req.Query {
		if len(v) > 0 {
			info.Query[k] = v[0]
		}
	}
	return info
}
