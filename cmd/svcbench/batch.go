package main

import (
	"bytes"
	"context"
	"net/http"
)

// Scenarios of bulk writes: batch (POST /api/v1/batch of --batch-size
// creates per request, batch.go) and ingest (CSV import, ingest.go).
const (
	scBatch  = "batch"
	scIngest = "ingest"
)

// batchLoad sends POST /api/v1/batch with size creates of the benchmark
// record per request: one log command and one transaction per request,
// so rows/s is size times the requests/s.
func batchLoad(env scenarioEnv, size int) load {
	nodes, coll := env.nodes, env.coll
	return load{rows: size, next: func(ctx context.Context, w *worker) (*http.Request, error) {
		body := batchBody(make([]byte, 0, 64+size*96), coll, size, w)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, nodes.bases[nodes.pick(w)]+"/api/v1/batch", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	}}
}

// batchBody appends {"requests":[{"method":"POST","url":...,"body":...}, ...]}
// with size creates of the worker's next records.
func batchBody(buf []byte, coll string, size int, w *worker) []byte {
	buf = append(buf, `{"requests":[`...)
	for i := range size {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"method":"POST","url":"`...)
		buf = append(buf, collPath(coll)...)
		buf = append(buf, `","body":`...)
		buf = recordBody(buf, w.id, w.seq)
		w.seq++
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
}
