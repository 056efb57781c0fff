package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// prepareRows tops the collection up to --seed-rows records (using the whole
// client pool) and returns record ids for get requests.
func prepareRows(ctx context.Context, api *apiClient, cfg config, log io.Writer) ([]string, error) {
	have, err := api.count(ctx, cfg.collection)
	if err != nil {
		return nil, fmt.Errorf("counting records: %w", err)
	}
	var ids []string
	if missing := cfg.seedRows - have; missing > 0 {
		fmt.Fprintf(log, "seeding %d records (collection has %d) with %d clients\n", missing, have, cfg.clients)
		start := time.Now()
		if ids, err = seed(ctx, api, cfg.collection, missing, cfg.clients); err != nil {
			return nil, err
		}
		el := time.Since(start)
		fmt.Fprintf(log, "seeded %d records in %.1fs (%.0f/s)\n", missing, el.Seconds(), float64(missing)/el.Seconds())
	}
	want := min(max(cfg.seedRows, 1000), maxGetIDs)
	if have > 0 && len(ids) < want {
		listed, err := api.listIDs(ctx, cfg.collection, want)
		if err != nil && len(listed) == 0 && len(ids) == 0 {
			return nil, fmt.Errorf("listing record ids: %w", err)
		}
		seen := make(map[string]bool, len(ids)+len(listed))
		for _, id := range ids {
			seen[id] = true
		}
		for _, id := range listed {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// seed creates n records using clients concurrent workers and returns their
// ids. It stops at the first failure.
func seed(ctx context.Context, api *apiClient, coll string, n, clients int) ([]string, error) {
	parts := make([][]string, clients)
	err := forEach(ctx, n, clients, func(ctx context.Context, client, k int) error {
		id, err := api.createRecord(ctx, coll, recordBody(make([]byte, 0, 64), -1-client, k))
		if err != nil {
			return fmt.Errorf("seeding record %d: %w", k, err)
		}
		if id != "" {
			parts[client] = append(parts[client], id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range parts {
		ids = append(ids, p...)
	}
	return ids, nil
}

// forEach calls fn for k = 0..n-1 from clients concurrent goroutines (client
// is the goroutine's number) and returns the first error, after which no
// new call starts.
func forEach(ctx context.Context, n, clients int, fn func(ctx context.Context, client, k int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				k := next.Add(1) - 1
				if k >= int64(n) {
					return
				}
				if err := fn(ctx, i, int(k)); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
