package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// createCollection creates a collection through the leader and waits until
// every running node has applied it.
func createCollection(ctx context.Context, env *Env, def string) error {
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	resp, err := env.C.Admin(l).Do(ctx, "POST", "/api/v1/admin/collections", json.RawMessage(def))
	if err != nil {
		return err
	}
	if resp.Status != http.StatusCreated {
		return fmt.Errorf("create collection: %s", resp)
	}
	return waitAll(ctx, env, resp.Index())
}

// waitAll waits until every running node has applied idx.
func waitAll(ctx context.Context, env *Env, idx uint64) error {
	for _, nd := range env.C.Running() {
		resp, err := env.C.Admin(nd).MinIndex(idx).Do(ctx, "GET", "/api/v1/admin/cluster", nil)
		if err != nil {
			return err
		}
		if resp.Status != http.StatusOK {
			return fmt.Errorf("%s: %s", nd.Name, resp)
		}
	}
	return nil
}

// createRecords creates one record per id with {"v": 0} through the
// leader and returns each one's log index; every node has applied them on
// return.
func createRecords(ctx context.Context, env *Env, coll string, ids []string) (map[string]uint64, error) {
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	var last uint64
	for _, id := range ids {
		resp, err := env.C.Admin(l).Do(ctx, "POST", "/api/v1/"+coll, map[string]any{"id": id, "v": 0})
		if err != nil {
			return nil, err
		}
		if resp.Status != http.StatusCreated {
			return nil, fmt.Errorf("create %s/%s: %s", coll, id, resp)
		}
		out[id], last = resp.Index(), resp.Index()
	}
	return out, waitAll(ctx, env, last)
}

// transient reports whether an answer leaves the outcome unknown: no
// answer, or a 5xx (no leader, timeout, shutting down).
func transient(status int, err error) bool { return err != nil || status >= 500 }
