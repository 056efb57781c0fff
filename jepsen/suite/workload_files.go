package suite

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"svcd/jepsen/checker"
)

const (
	// filesCollection: a multiple file field, so uploads append; the
	// view rule admits anyone to the downloads; uploads and deletes are
	// an admin's (the update rule is admin-only).
	filesCollection = `{"name":"jfiles","type":"base","view_rule":"",
	"fields":[{"name":"att","type":"file","multiple":true}]}`
	// filesUploadTimeout bounds an upload: its bytes go to a majority of
	// the voters before the answer, over links the nemesis may slow
	// (2 MiB through a 250 ms link takes seconds of TCP slow start).
	filesUploadTimeout = 10 * time.Second
	// filesMaxSize is the largest file uploaded.
	filesMaxSize = 2 << 20
	// filesByteRate bounds the bytes all clients upload per second (small
	// files go at the pace of the cluster, large ones wait their turn):
	// every file stays on every node's tmpfs for the grace period, deleted
	// or not, so a 75 s run stores about 300 MB per node.
	filesByteRate = 4 << 20
)

// Files uploads files of varied sizes (1 byte to 2 MiB, random bytes
// drawn from the worker's seeded source, each with the SHA-256 the client
// computed) to a few records through random nodes, downloads acknowledged
// ones during the run, and deletes some. The checker
// (checker.CheckFiles) then wants every acknowledged file that was not
// deleted listed in its record and served with its bytes by every node,
// an unknown upload absent or right everywhere, and no deleted file back.
type Files struct {
	// Records is how many records the uploads spread over.
	Records int

	ids []string

	mu      sync.Mutex
	seq     map[int]int
	uploads []checker.FileUpload
	index   map[string]int // client's name -> position in uploads
	// live are the acknowledged uploads no one is reading or deleting, and
	// no one has deleted: a read or a delete takes one out, a read puts
	// it back.
	live    []filesAcked
	deletes []checker.FileDelete
	reads   []checker.FileRead
	// next is when the byte budget (filesByteRate) lets the next upload
	// go.
	next time.Time
}

// filesAcked is an acknowledged upload: its stored name, its record and
// the log index of its write.
type filesAcked struct {
	stored, record string
	index          uint64
}

// NewFiles is the files workload over eight records.
func NewFiles() *Files {
	return &Files{Records: 8, seq: map[int]int{}, index: map[string]int{}}
}

func (f *Files) Name() string { return "files" }

// Setup creates the collection and the records in one batch through the
// leader, and waits until every node has them.
func (f *Files) Setup(ctx context.Context, env *Env) error {
	if err := createCollection(ctx, env, filesCollection); err != nil {
		return err
	}
	var reqs []map[string]any
	for i := range f.Records {
		id := fmt.Sprintf("jfiles%09d", i)
		f.ids = append(f.ids, id)
		reqs = append(reqs, map[string]any{"method": "POST", "url": "/api/v1/jfiles", "body": map[string]any{"id": id}})
	}
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	resp, err := env.C.Admin(l).Do(ctx, "POST", "/api/v1/batch", map[string]any{"requests": reqs})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("create records: %s", resp)
	}
	return waitAll(ctx, env, resp.Index())
}

// Step uploads (6 in 10), downloads an acknowledged file (2 in 10) or
// deletes one (2 in 10).
func (f *Files) Step(ctx context.Context, w *Worker) {
	switch p := w.Rand.IntN(10); {
	case p < 6:
		f.upload(ctx, w)
	case p < 8:
		f.read(ctx, w)
	default:
		f.delete(ctx, w)
	}
}

// upload sends one new file to a random record through a random node.
func (f *Files) upload(ctx context.Context, w *Worker) {
	f.mu.Lock()
	f.seq[w.ID]++
	name := fmt.Sprintf("f%02d-%06d.bin", w.ID, f.seq[w.ID])
	f.mu.Unlock()
	rec := f.ids[w.Rand.IntN(len(f.ids))]
	data := filesBody(w.Rand, name)
	f.mu.Lock()
	now := time.Now()
	wait := f.next.Sub(now)
	f.next = maxTime(f.next, now).Add(time.Duration(len(data)) * time.Second / filesByteRate)
	f.mu.Unlock()
	if sleep(ctx, wait); ctx.Err() != nil {
		return
	}
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	sum := sha256.Sum256(data)
	u := checker.FileUpload{Name: name, Record: rec, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
		Outcome: checker.FileUnknown, Node: nd.Name, Sent: time.Now()}
	f.mu.Lock()
	f.index[name] = len(f.uploads)
	f.uploads = append(f.uploads, u)
	f.mu.Unlock()

	cl := w.env.C.Admin(nd)
	cl.Timeout = filesUploadTimeout
	resp, err := cl.Upload(context.Background(), "/api/v1/files/jfiles/"+rec+"/att", "file", name, data)
	switch {
	case err == nil && resp.Status == http.StatusServiceUnavailable && resp.APIError().Error == "Not enough nodes are reachable to store the file":
		// Refused before anything was proposed (files.md, "In a
		// cluster"): certainly not applied, which the checker verifies.
		f.settle(name, checker.FileFailed, "", 0)
		w.Done("upload", Fail)
	case transient(status(resp), err):
		w.Done("upload", Info)
	case resp.Status == http.StatusCreated:
		var out struct {
			Data []struct {
				Filename     string
				OriginalName string
				Size         int64
			}
		}
		if err := resp.JSON(&out); err != nil || len(out.Data) != 1 || out.Data[0].Filename == "" ||
			out.Data[0].OriginalName != name || out.Data[0].Size != u.Size {
			w.Errorf("%s upload %s (%d bytes): unexpected answer %v: %s", nd.Name, name, u.Size, err, resp)
			return
		}
		stored := out.Data[0].Filename
		f.settle(name, checker.FileOK, stored, resp.Index())
		f.mu.Lock()
		f.live = append(f.live, filesAcked{stored: stored, record: rec, index: resp.Index()})
		f.mu.Unlock()
		w.Done("upload", OK)
	default:
		f.settle(name, checker.FileFailed, "", 0)
		w.Errorf("%s upload %s (%d bytes): %s", nd.Name, name, u.Size, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

// settle records an upload's definite outcome.
func (f *Files) settle(name string, o checker.FileOutcome, stored string, index uint64) {
	f.mu.Lock()
	u := &f.uploads[f.index[name]]
	u.Outcome, u.Stored, u.Index = o, stored, index
	f.mu.Unlock()
}

// read downloads an acknowledged file no one deletes through a random
// node once that node has applied its upload (X-Svc-Min-Index), and
// records the SHA-256 of what it served.
func (f *Files) read(ctx context.Context, w *Worker) {
	a, ok := f.take(w)
	if !ok {
		f.upload(ctx, w)
		return
	}
	defer f.putBack(a)
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	cl := w.Client(nd).MinIndex(a.index)
	cl.Timeout = filesUploadTimeout
	resp, err := cl.Do(ctx, "GET", "/api/v1/files/"+a.stored, nil)
	r := checker.FileRead{Node: nd.Name, Stored: a.stored, Status: status(resp)}
	switch {
	case err == nil && resp.Status == http.StatusOK:
		sum := sha256.Sum256(resp.Body)
		r.SHA256 = hex.EncodeToString(sum[:])
	case err == nil && resp.Status == http.StatusNotFound:
		// The node knows no such file, though it applied the upload and
		// no one deleted the file; a node that lacks the bytes and cannot
		// reach a peer that has them says so in another message.
		r.Gone = resp.APIError().Error == filesNoSuchFile
	}
	f.mu.Lock()
	f.reads = append(f.reads, r)
	f.mu.Unlock()
	if r.Status != http.StatusOK {
		w.Done("read", Fail)
		return
	}
	w.Done("read", OK)
}

// filesNoSuchFile is the error of a download of a name the node's
// metadata does not hold.
const filesNoSuchFile = "The requested file wasn't found"

// take takes a random live file out of the pool (false: there is none).
func (f *Files) take(w *Worker) (filesAcked, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.live) == 0 {
		return filesAcked{}, false
	}
	i := w.Rand.IntN(len(f.live))
	a := f.live[i]
	f.live[i] = f.live[len(f.live)-1]
	f.live = f.live[:len(f.live)-1]
	return a, true
}

// putBack returns a file to the pool.
func (f *Files) putBack(a filesAcked) {
	f.mu.Lock()
	f.live = append(f.live, a)
	f.mu.Unlock()
}

// delete removes an acknowledged file no one has tried to delete, through
// a random node.
func (f *Files) delete(ctx context.Context, w *Worker) {
	a, ok := f.take(w)
	if !ok {
		f.upload(ctx, w)
		return
	}
	nd := w.Node()
	if nd == nil {
		f.putBack(a)
		time.Sleep(20 * time.Millisecond)
		return
	}
	d := checker.FileDelete{Stored: a.stored, Outcome: checker.FileUnknown, Node: nd.Name, Sent: time.Now()}
	cl := w.env.C.Admin(nd)
	cl.Timeout = OpTimeout
	resp, err := cl.Do(context.Background(), "DELETE", "/api/v1/files/jfiles/"+a.record+"/att/"+a.stored, nil)
	switch {
	case transient(status(resp), err):
		w.Done("delete", Info)
	case resp.Status == http.StatusNoContent:
		d.Outcome = checker.FileOK
		w.Done("delete", OK)
	case resp.Status == http.StatusNotFound:
		// The checker judges it: no one else deleted the file.
		d.Outcome, d.Missing = checker.FileFailed, true
		w.Done("delete", Fail)
	default:
		d.Outcome = checker.FileFailed
		w.Errorf("%s delete %s: %s", nd.Name, a.stored, resp)
		time.Sleep(100 * time.Millisecond)
	}
	f.mu.Lock()
	f.deletes = append(f.deletes, d)
	f.mu.Unlock()
}

// filesBody is a file of a random size: 12 in 20 up to 16 KiB, 7 in 20
// from 16 to 256 KiB, 1 in 20 from 256 KiB to filesMaxSize, each size
// log-uniform within its range (73 KB on average). It begins with its name and a NUL (so it
// sniffs as application/octet-stream, never as a type on the deny list:
// random bytes could begin with "MZ"), cut to the size for the smallest;
// random bytes follow.
func filesBody(r *rand.Rand, name string) []byte {
	lo, hi := 1.0, float64(16<<10)
	switch p := r.IntN(20); {
	case p == 19:
		lo, hi = 256<<10, filesMaxSize
	case p >= 12:
		lo, hi = 16<<10, 256<<10
	}
	n := int(math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo))))
	b := make([]byte, (n+7)&^7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	copy(b, name+"\x00")
	return b[:n]
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
