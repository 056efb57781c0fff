package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Scenario names.
const (
	scCreate = "create"
	scGet    = "get"
	scList   = "list"
	scFilter = "filter"
	scUpdate = "update"
	scCAS    = "cas"
	scMixed  = "mixed"
	scAll    = "all"
)

// scenarioNames lists the --scenario values, for messages.
const scenarioNames = "create, get, list, filter, update, cas, mixed, all, batch, ingest, queue, fanout, fanout-rate, fanout-idle, upload, download or upload-big"

// Mix of the mixed scenario, in percent: the rest are list requests.
const (
	mixedCreatePct = 20
	mixedGetPct    = 60
)

// scenarios expands a --scenario value, a comma-separated list of names
// ("all" standing for create, get, list); nil when a name is unknown.
func scenarios(value string) []string {
	var out []string
	for name := range strings.SplitSeq(value, ",") {
		switch name = strings.TrimSpace(name); name {
		case scAll:
			out = append(out, scCreate, scGet, scList)
		case scCreate, scGet, scList, scFilter, scUpdate, scCAS, scMixed, scBatch, scIngest, scQueue, scFanout, scFanoutRate, scFanoutIdle,
			scUpload, scDownload, scUploadBig:
			out = append(out, name)
		default:
			return nil
		}
	}
	return out
}

// load is what the workers of one scenario run.
type load struct {
	// next builds a worker's next request.
	next func(ctx context.Context, w *worker) (*http.Request, error)
	// seen, when set, is shown the status and headers of every answer a
	// worker gets (before its body is read).
	seen func(w *worker, status int, h http.Header)
	// rows, when set, is how many records one successful request
	// writes (batch): the result then reports rows/s.
	rows int
	// bytes, when set, is the file size one successful request moves
	// (upload, download): the result then reports MB/s.
	bytes int64
}

// scenarioEnv is what the scenarios are built from.
type scenarioEnv struct {
	api       *apiClient // control plane: auth, seeding, ETags (the first node)
	nodes     targets    // where the workers' requests go
	coll      string
	ids       []string // ids of existing records, for get, update and cas
	clients   int
	seedRows  int
	skipTotal bool
	batchSize int       // creates per batch request
	filesColl string    // the file scenarios' collection
	log       io.Writer // progress of preparation steps
}

// needsRows reports whether a scenario runs over seeded records.
func needsRows(name string) bool {
	return name != scCreate && name != scBatch && name != scIngest && name != scQueue && !isFanout(name) && !isFileScenario(name)
}

// newLoad builds the load of a scenario; cas fetches the current ETag of
// every record its clients will update first.
func newLoad(ctx context.Context, name string, env scenarioEnv) (load, error) {
	nodes, coll := env.nodes, env.coll
	create := func(ctx context.Context, w *worker) (*http.Request, error) {
		body := recordBody(make([]byte, 0, 64), w.id, w.seq)
		w.seq++
		return createRequest(ctx, nodes.bases[nodes.pick(w)], coll, body)
	}
	get := func(ctx context.Context, w *worker) (*http.Request, error) {
		return getRequest(ctx, nodes.bases[nodes.pick(w)], coll, env.ids[w.rng.IntN(len(env.ids))])
	}
	list := fixedGet(nodes, coll, env.skipTotal, "")
	switch name {
	case scCreate:
		return load{next: create}, nil
	case scBatch:
		return batchLoad(env, env.batchSize), nil
	case scList:
		return load{next: list}, nil
	case scFilter:
		return load{next: fixedGet(nodes, coll, env.skipTotal, listFilter(env.seedRows))}, nil
	}
	if len(env.ids) == 0 {
		return load{}, fmt.Errorf("%s: no record ids (is --seed-rows 0 on an empty collection?)", name)
	}
	switch name {
	case scGet:
		return load{next: get}, nil
	case scUpdate:
		return load{next: func(ctx context.Context, w *worker) (*http.Request, error) {
			body := titleBody(make([]byte, 0, 48), "upd", w.id, w.seq)
			w.seq++
			return patchRequest(ctx, nodes.bases[nodes.pick(w)], coll, env.ids[w.rng.IntN(len(env.ids))], body, "")
		}}, nil
	case scCAS:
		c, err := newCASLoad(ctx, env)
		if err != nil {
			return load{}, err
		}
		return c.load(), nil
	case scMixed:
		return load{next: func(ctx context.Context, w *worker) (*http.Request, error) {
			switch r := w.rng.IntN(100); {
			case r < mixedCreatePct:
				return create(ctx, w)
			case r < mixedCreatePct+mixedGetPct:
				return get(ctx, w)
			default:
				return list(ctx, w)
			}
		}}, nil
	}
	return load{}, fmt.Errorf("unknown scenario %q", name)
}

// fixedGet sends GET of one list URL per node (a page of 30, filtered when
// filter is not empty).
func fixedGet(nodes targets, coll string, skipTotal bool, filter string) func(context.Context, *worker) (*http.Request, error) {
	urls := make([]string, len(nodes.bases))
	for i, b := range nodes.bases {
		urls[i] = listURL(b, coll, skipTotal, filter)
	}
	return func(ctx context.Context, w *worker) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, urls[nodes.pick(w)], nil)
	}
}
