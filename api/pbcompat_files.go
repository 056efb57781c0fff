package api

import (
	"context"
	"net/http"

	"svcd/api/pbcompat"
	"svcd/engine"
	"svcd/engine/files"
)

// pbFiles hands PocketBase's file routes svcd's files module with api's
// multipart reader and download writer (limits, headers, audit: one
// policy for /api/v1/files and /api/files).
type pbFiles struct{ s *Server }

func (f pbFiles) Parts(r *http.Request) (files.Parts, error) { return multipartParts(r) }

func (f pbFiles) CreateRecordPublic(ctx context.Context, p engine.Principal, coll string, parts files.Parts) (*engine.Record, uint64, error) {
	return f.s.files.CreateRecordPublic(ctx, p, coll, parts)
}

func (f pbFiles) UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, parts files.Parts, ifMatch string) (*engine.Record, uint64, error) {
	return f.s.files.UpdateRecord(ctx, p, coll, id, parts, ifMatch)
}

func (f pbFiles) AnyToken(ctx context.Context, p engine.Principal) (*files.FileToken, error) {
	return f.s.files.AnyToken(ctx, p)
}

func (f pbFiles) Serve(w http.ResponseWriter, r *http.Request, p engine.Principal, req files.DownloadRequest, attachment bool, writeErr func(http.ResponseWriter, *http.Request, error)) {
	f.s.serveDownload(w, r, p, req, attachment, writeErr)
}

// pbBatch hands PocketBase's batch route api's batch runner.
type pbBatch struct{ s *Server }

func (b pbBatch) RunBatch(r *http.Request, p engine.Principal, body []byte) ([]pbcompat.BatchAnswer, uint64, error) {
	reqs, res, idx, err := b.s.runBatch(r, p, body)
	if err != nil {
		return nil, idx, err
	}
	out := make([]pbcompat.BatchAnswer, len(reqs))
	for i, req := range reqs {
		out[i] = pbcompat.BatchAnswer{Status: entryStatus(req, res.Items[i]), Collection: req.Op.Collection, Body: res.Items[i].Body}
	}
	return out, idx, nil
}
