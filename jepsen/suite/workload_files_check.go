package suite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// filesFetchers is how many downloads the final check runs at once per
// node.
const filesFetchers = 3

// filesFinalRounds bounds how many times the final check reads the
// nodes' state again because a write landed meanwhile.
const filesFinalRounds = 5

// Check reads every node's records (local reads, after the convergence
// the runner waited for), downloads from every node every file any node
// lists, every acknowledged file and every deleted one, reads the records
// again, and judges the history with checker.CheckFiles. A write whose
// client gave up can still land after the runner saw the log stand still
// (a forwarded write that sat in a cut-off node's socket: 6.5 s after it
// was sent, in one run); when the records changed during the downloads,
// the state is read again.
func (f *Files) Check(ctx context.Context, env *Env) Verdict {
	f.mu.Lock()
	uploads := slices.Clone(f.uploads)
	deletes := slices.Clone(f.deletes)
	reads := slices.Clone(f.reads)
	f.mu.Unlock()
	v := Verdict{Valid: true}
	var final map[string]checker.FileNode
	for round := 1; ; round++ {
		var errs []string
		final, errs = f.state(ctx, env, uploads, deletes)
		after, errs2 := f.allRecords(ctx, env)
		errs = append(errs, errs2...)
		if len(errs) > 0 && round == filesFinalRounds {
			v.Valid = false
			v.Notes = append(v.Notes, errs...)
			break
		}
		if len(errs) == 0 && sameRecords(final, after) {
			break
		}
		if round == filesFinalRounds {
			v.Valid = false
			v.Notes = append(v.Notes, fmt.Sprintf("the records kept changing during the final check (%d rounds)", round))
			break
		}
		why := "the records changed while the files were downloaded (a late write)"
		if len(errs) > 0 {
			why = strings.Join(errs, "; ")
		}
		v.Notes = append(v.Notes, fmt.Sprintf("final check, round %d: %s; reading the state again", round, why))
		sleep(ctx, 2*time.Second)
	}
	fig, notes := checker.CheckFiles(uploads, deletes, reads, final)
	v.Valid = v.Valid && fig.Valid()
	v.Acknowledged, v.Lost, v.Duplicates = fig.UploadsOK, fig.Lost, fig.Duplicates
	v.Corrupted = fig.Corrupted + fig.CorruptReads
	v.Notes = append(v.Notes, "files: "+fig.String())
	v.Notes = append(v.Notes, notes...)
	if !v.Valid {
		v.Notes = append(v.Notes, saveLogs(env, "files"), f.saveHistory(env, uploads, deletes, reads))
	}
	return v
}

// state reads every running node's records, then downloads from each node
// every file any node lists, every acknowledged file and every deleted
// one. A node whose records cannot be read is left out, with an error.
func (f *Files) state(ctx context.Context, env *Env, uploads []checker.FileUpload, deletes []checker.FileDelete) (map[string]checker.FileNode, []string) {
	records, errs := f.allRecords(ctx, env)
	ask := map[string]bool{}
	for _, u := range uploads {
		if u.Stored != "" {
			ask[u.Stored] = true
		}
	}
	for _, d := range deletes {
		ask[d.Stored] = true
	}
	for _, recs := range records {
		for _, names := range recs {
			for _, s := range names {
				ask[s] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(ask))
	final := map[string]checker.FileNode{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, nd := range env.C.Running() {
		if records[nd.Name] == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			files := f.download(ctx, env, nd, names)
			mu.Lock()
			final[nd.Name] = checker.FileNode{Records: records[nd.Name], Files: files}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return final, errs
}

// allRecords reads the records of every running node (by node name).
func (f *Files) allRecords(ctx context.Context, env *Env) (map[string]map[string][]string, []string) {
	out := map[string]map[string][]string{}
	var errs []string
	for _, nd := range env.C.Running() {
		recs, err := f.records(ctx, env, nd)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: final read: %v", nd.Name, err))
			continue
		}
		out[nd.Name] = recs
	}
	return out, errs
}

// sameRecords reports whether every node of final lists what it listed
// again in after.
func sameRecords(final map[string]checker.FileNode, after map[string]map[string][]string) bool {
	if len(final) != len(after) {
		return false
	}
	for name, st := range final {
		again, ok := after[name]
		if !ok || !maps.EqualFunc(st.Records, again, slices.Equal[[]string]) {
			return false
		}
	}
	return true
}

// saveHistory writes the run's uploads, deletes and reads to
// <report dir>/files-<seed>-history.json; it answers a note.
func (f *Files) saveHistory(env *Env, uploads []checker.FileUpload, deletes []checker.FileDelete, reads []checker.FileRead) string {
	b, err := json.MarshalIndent(map[string]any{"uploads": uploads, "deletes": deletes, "reads": reads}, "", " ")
	if err != nil {
		return fmt.Sprintf("history not saved: %v", err)
	}
	path := filepath.Join(env.Dir, fmt.Sprintf("files-%d-history.json", env.Opts.Seed))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Sprintf("history not saved: %v", err)
	}
	return "history saved in " + path
}

// saveLogs copies the log of every node the run started (retired ones
// included) to <report dir>/<workload>-<seed>-logs/, for the files whose
// story spans nodes the harness no longer knows; it answers a note.
func saveLogs(env *Env, workload string) string {
	nodes := env.C.Nodes()
	if len(nodes) == 0 {
		return "no node logs to save"
	}
	dst := filepath.Join(env.Dir, fmt.Sprintf("%s-%d-logs", workload, env.Opts.Seed))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Sprintf("node logs not saved: %v", err)
	}
	dirs, err := os.ReadDir(filepath.Dir(nodes[0].DataDir()))
	if err != nil {
		return fmt.Sprintf("node logs not saved: %v", err)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(nodes[0].DataDir()), d.Name(), harness.LogName))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, d.Name()+".log"), b, 0o644); err != nil {
			return fmt.Sprintf("node logs not saved: %v", err)
		}
	}
	return "node logs saved in " + dst
}

// records lists the records node nd holds: the stored names of each one's
// file field.
func (f *Files) records(ctx context.Context, env *Env, nd *harness.Node) (map[string][]string, error) {
	cl := env.C.Admin(nd)
	cl.Timeout = 30 * time.Second
	rows, err := harness.ListAll(ctx, cl, "jfiles", nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		var rec struct{ Att []string }
		if err := json.Unmarshal(r.Raw, &rec); err != nil {
			return nil, fmt.Errorf("record %s: %w", r.ID, err)
		}
		out[r.ID] = rec.Att
	}
	return out, nil
}

// download fetches every stored name from node nd, filesFetchers at a
// time. An answer without a status or with a 5xx is asked again, up to
// five times: the cluster is healed, but a node may still be fetching
// a blob from a peer.
func (f *Files) download(ctx context.Context, env *Env, nd *harness.Node, names []string) map[string]checker.FileCopy {
	cl := env.C.Client(nd)
	cl.Timeout = 30 * time.Second
	out := make(map[string]checker.FileCopy, len(names))
	var mu sync.Mutex
	todo := make(chan string)
	var wg sync.WaitGroup
	for range filesFetchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range todo {
				c := fetchFile(ctx, cl, name)
				mu.Lock()
				out[name] = c
				mu.Unlock()
			}
		}()
	}
	for _, name := range names {
		todo <- name
	}
	close(todo)
	wg.Wait()
	return out
}

// fetchFile downloads one stored name: the status, and for a 200 the
// SHA-256, the length and the original name of the Content-Disposition.
func fetchFile(ctx context.Context, cl *harness.Client, name string) checker.FileCopy {
	var c checker.FileCopy
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			sleep(ctx, 500*time.Millisecond)
		}
		resp, err := cl.Do(ctx, "GET", "/api/v1/files/"+name, nil)
		c = checker.FileCopy{Status: status(resp)}
		if err != nil {
			c.Error = err.Error()
		} else if resp.Status != http.StatusOK {
			c.Error = resp.APIError().Error
		}
		if transient(c.Status, err) {
			continue
		}
		if resp.Status == http.StatusOK {
			sum := sha256.Sum256(resp.Body)
			c.SHA256, c.Size = hex.EncodeToString(sum[:]), int64(len(resp.Body))
			if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
				c.OriginalName = params["filename"]
			}
		}
		return c
	}
	return c
}
