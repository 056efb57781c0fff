package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// The requests the workers send. Each takes the base URL of the node it
// goes to, so a run can spread them over the nodes of a cluster.

// recordBody appends the JSON body of the seq-th record of a worker to buf.
// n is seq and done is true for odd seq, which the filter scenario selects
// on.
func recordBody(buf []byte, worker, seq int) []byte {
	return recordBodyN(buf, worker, seq, int64(seq))
}

// recordBodyN is recordBody with n given.
func recordBodyN(buf []byte, worker, seq int, n int64) []byte {
	buf = append(buf, `{"title":"bench `...)
	buf = strconv.AppendInt(buf, int64(worker), 10)
	buf = append(buf, '-')
	buf = strconv.AppendInt(buf, int64(seq), 10)
	buf = append(buf, `","n":`...)
	buf = strconv.AppendInt(buf, n, 10)
	buf = append(buf, `,"done":`...)
	buf = strconv.AppendBool(buf, seq%2 == 1)
	return append(buf, '}')
}

// titleBody appends {"title":"<prefix> <worker>-<seq>"}, the body of update
// and cas requests: a title no earlier write gave the record, so each
// successful update changes it (and its ETag).
func titleBody(buf []byte, prefix string, worker, seq int) []byte {
	buf = append(buf, `{"title":"`...)
	buf = append(buf, prefix...)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(worker), 10)
	buf = append(buf, '-')
	buf = strconv.AppendInt(buf, int64(seq), 10)
	return append(buf, `"}`...)
}

// createRequest builds POST /api/v1/:collection.
func createRequest(ctx context.Context, base, coll string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+collPath(coll), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// getRequest builds GET /api/v1/:collection/:id.
func getRequest(ctx context.Context, base, coll, id string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, recordURL(base, coll, id), nil)
}

// patchRequest builds PATCH /api/v1/:collection/:id, conditional on
// ifMatch when it is not empty.
func patchRequest(ctx context.Context, base, coll, id string, body []byte, ifMatch string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, recordURL(base, coll, id), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	return req, nil
}

func recordURL(base, coll, id string) string {
	return base + collPath(coll) + "/" + url.PathEscape(id)
}

// listURL is the URL of a page of 30 records, filtered when filter is not
// empty.
func listURL(base, coll string, skipTotal bool, filter string) string {
	u := base + collPath(coll) + "?perPage=30"
	if skipTotal {
		u += "&skipTotal=1"
	}
	if filter != "" {
		u += "&filter=" + url.QueryEscape(filter)
	}
	return u
}

// listFilter is the filter of the filter scenario: two conditions that hold
// for a quarter of the seeded rows (n runs from 0 to seedRows-1, done is
// true for odd n).
func listFilter(seedRows int) string {
	return "n >= " + strconv.Itoa(seedRows/2) + " && done = true"
}
