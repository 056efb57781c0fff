package checker

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// The files workload's checker: a pure function of the uploads and
// deletes sent, the downloads made during the run and what every node
// serves at the end, so hand-made histories test it.

// FileOutcome is how a client's upload or delete ended.
type FileOutcome int

const (
	// FileOK: acknowledged (201 for an upload, 204 for a delete).
	FileOK FileOutcome = iota
	// FileFailed: certainly not applied (a 4xx).
	FileFailed
	// FileUnknown: no answer or a 5xx; it may or may not have been
	// applied.
	FileUnknown
)

func (o FileOutcome) String() string {
	switch o {
	case FileOK:
		return "ok"
	case FileFailed:
		return "failed"
	}
	return "unknown"
}

// FileUpload is one upload sent: the file name the client gave (unique
// per upload, so a stored file names its upload through the
// Content-Disposition of its download), the record it went to, the size
// and SHA-256 (hex) of its bytes, how it ended and, when acknowledged,
// the stored name the 201 answered. Node and Sent (the node it went
// through and when) only make the notes easier to follow.
type FileUpload struct {
	Name    string
	Record  string
	Size    int64
	SHA256  string
	Outcome FileOutcome
	Stored  string
	Node    string
	Sent    time.Time
	// Index is the log index of an acknowledged upload (X-Svc-Index).
	Index uint64
}

// origin is where and when u was sent, for the notes.
func (u *FileUpload) origin() string {
	return fmt.Sprintf("upload %s of %d bytes through %s at %s", u.Name, u.Size, u.Node, u.Sent.Format("15:04:05.000"))
}

// FileDelete is one delete sent, of the acknowledged file Stored (each
// file is deleted at most once). Missing marks a definite failure that
// said the record did not hold the file (404): a delete is checked when
// it is applied, after the upload it follows, so the file was gone.
type FileDelete struct {
	Stored  string
	Outcome FileOutcome
	Missing bool
	Node    string
	Sent    time.Time
}

// FileRead is one download of an acknowledged file no one deleted or
// was deleting, during the run, on a node that had applied its upload:
// the status, the SHA-256 of the bytes of a 200, and whether a 404 said
// the node knows no such file (Gone; not that it lacks the bytes, which a
// node cut off from its peers may).
type FileRead struct {
	Node, Stored string
	Status       int
	SHA256       string
	Gone         bool
}

// FileCopy is what one node served at the end for one stored name: the
// status (0 without an answer) and the error message of a refusal, and
// for a 200 the SHA-256 and length of the bytes and the original name of
// the Content-Disposition.
type FileCopy struct {
	Status       int
	Error        string
	SHA256       string
	Size         int64
	OriginalName string
}

// answer is c's status with its error message, for the notes.
func (c FileCopy) answer() string {
	if c.Error == "" {
		return fmt.Sprint(c.Status)
	}
	return fmt.Sprintf("%d (%s)", c.Status, c.Error)
}

// FileNode is one node's final state: the stored names each record's file
// field lists, and what the node served for every stored name asked.
type FileNode struct {
	Records map[string][]string
	Files   map[string]FileCopy
}

// FilesFigures are the files workload's counts.
type FilesFigures struct {
	// Uploads by outcome; UnknownPresent are the unknown ones some node
	// holds (their metadata committed).
	UploadsOK, UploadsFailed, UploadsUnknown, UnknownPresent int
	// Deletes by outcome.
	DeletesOK, DeletesFailed, DeletesUnknown int
	// Reads are the downloads made during the run; ReadsServed those
	// answered 200 (and checked); ReadsNoBytes those answered 404 for
	// bytes the node lacked and could not fetch (a partition), not judged.
	Reads, ReadsServed, ReadsNoBytes int
	// Nodes whose final state was read; Downloads the final 200 answers
	// checked and Bytes their length.
	Nodes, Downloads int
	Bytes            int64

	// Lost: acknowledged uploads, not deleted, that some node does not
	// list in their record or does not serve. Unreadable: files of an
	// unknown upload that a node lists and cannot serve (committed
	// metadata whose bytes are gone). Corrupted: stored names some node
	// serves with other bytes than their upload's; CorruptReads: downloads
	// during the run with other bytes. Resurrected: files whose delete was
	// acknowledged that a node lists or serves. FailedPresent: uploads
	// that failed, present. Foreign: listed files no upload explains, or
	// listed in another record than their upload's. Duplicates: a stored
	// name listed twice, or one upload stored under two names. Diverged:
	// nodes whose records list other files than the first node's.
	Lost, Unreadable, Corrupted, CorruptReads, Resurrected int
	FailedPresent, Foreign, Duplicates, Diverged           int
	// MissingOnDelete: deletes of acknowledged files, deleted by no one
	// before, answered 404 (the record did not hold the file when the
	// delete was applied: a loss, or a wrong answer). ReadsGone: reads
	// answered that the node knows no such file.
	MissingOnDelete, ReadsGone int
}

// Valid reports a history with no violation, checked on at least one node.
func (f FilesFigures) Valid() bool {
	return f.Lost == 0 && f.Unreadable == 0 && f.Corrupted == 0 && f.CorruptReads == 0 && f.Resurrected == 0 &&
		f.FailedPresent == 0 && f.Foreign == 0 && f.Duplicates == 0 && f.Diverged == 0 && f.MissingOnDelete == 0 && f.ReadsGone == 0 && f.Nodes > 0
}

func (f FilesFigures) String() string {
	return fmt.Sprintf("uploads ok %d, failed %d, unknown %d (%d present); deletes ok %d, failed %d, unknown %d; "+
		"reads %d (%d served, %d without bytes); %d nodes, %d downloads checked, %d bytes; lost %d, unreadable %d, corrupted %d, "+
		"corrupt reads %d, resurrected %d, failed present %d, foreign %d, duplicates %d, diverged %d, missing on delete %d, reads gone %d",
		f.UploadsOK, f.UploadsFailed, f.UploadsUnknown, f.UnknownPresent, f.DeletesOK, f.DeletesFailed, f.DeletesUnknown,
		f.Reads, f.ReadsServed, f.ReadsNoBytes, f.Nodes, f.Downloads, f.Bytes, f.Lost, f.Unreadable, f.Corrupted,
		f.CorruptReads, f.Resurrected, f.FailedPresent, f.Foreign, f.Duplicates, f.Diverged, f.MissingOnDelete, f.ReadsGone)
}

// maxFilesNotes bounds the violation notes (the figures count them all).
const maxFilesNotes = 20

// CheckFiles judges a files history: the uploads and deletes sent, the
// downloads during the run and every node's final state (by node name).
// Every acknowledged upload not deleted must be listed in its record and
// served with its upload's bytes by every node; a file whose delete was
// acknowledged must be listed and served by none; a file of an unknown
// upload may be absent, but if a node lists it, every node lists it and
// serves its bytes; no failed upload may be present; nothing else may be
// listed; nodes list the same files.
func CheckFiles(uploads []FileUpload, deletes []FileDelete, reads []FileRead, final map[string]FileNode) (FilesFigures, []string) {
	var f FilesFigures
	var notes []string
	note := func(format string, args ...any) {
		if len(notes) < maxFilesNotes {
			notes = append(notes, fmt.Sprintf(format, args...))
		}
	}
	byName := map[string]*FileUpload{}   // client's name -> upload
	byStored := map[string]*FileUpload{} // stored name -> acknowledged upload
	for i := range uploads {
		u := &uploads[i]
		byName[u.Name] = u
		switch u.Outcome {
		case FileOK:
			f.UploadsOK++
			byStored[u.Stored] = u
		case FileFailed:
			f.UploadsFailed++
		default:
			f.UploadsUnknown++
		}
	}
	// Deleted files: acknowledged (gone), unknown (either way).
	gone, maybeGone := map[string]bool{}, map[string]bool{}
	for _, d := range deletes {
		switch d.Outcome {
		case FileOK:
			f.DeletesOK++
			gone[d.Stored] = true
		case FileFailed:
			f.DeletesFailed++
			if u := byStored[d.Stored]; d.Missing && u != nil {
				f.MissingOnDelete++
				note("a delete of acknowledged file %s (%s) answered 404: the record did not hold it", d.Stored, u.Name)
			}
		default:
			f.DeletesUnknown++
			maybeGone[d.Stored] = true
		}
	}
	for _, r := range reads {
		f.Reads++
		switch {
		case r.Gone:
			f.ReadsGone++
			note("a download of %s on %s during the run answered that the node knows no such file", r.Stored, r.Node)
			continue
		case r.Status == 404:
			f.ReadsNoBytes++
			continue
		case r.Status != 200:
			continue
		}
		f.ReadsServed++
		if u := byStored[r.Stored]; u == nil || r.SHA256 != u.SHA256 {
			f.CorruptReads++
			note("a download of %s on %s during the run served bytes with SHA-256 %.12s, not the upload's", r.Stored, r.Node, r.SHA256)
		}
	}

	names := slices.Sorted(maps.Keys(final))
	f.Nodes = len(names)
	lost := map[string]bool{}
	unreadable := map[string]bool{}
	corrupted := map[string]bool{}
	resurrected := map[string]bool{}
	present := map[string]bool{} // uploads (by client name) some node holds
	var first map[string]string
	for i, name := range names {
		st := final[name]
		listed := map[string]string{} // stored name -> record
		storedAs := map[string]string{}
		for _, rec := range slices.Sorted(maps.Keys(st.Records)) {
			for _, s := range st.Records[rec] {
				if prev, dup := listed[s]; dup {
					f.Duplicates++
					note("%s lists %s twice (records %s and %s)", name, s, prev, rec)
					continue
				}
				listed[s] = rec
			}
		}
		for _, s := range slices.Sorted(maps.Keys(listed)) {
			rec := listed[s]
			c, asked := st.Files[s]
			u := byStored[s]
			if u == nil && asked && c.Status == 200 {
				u = byName[c.OriginalName]
			}
			switch {
			case u == nil && (!asked || c.Status != 200):
				unreadable[s] = true
				note("%s lists %s in record %s and serves it with status %s: no upload can be matched", name, s, rec, c.answer())
				continue
			case u == nil:
				f.Foreign++
				note("%s lists %s in record %s, named %q: no upload was sent so", name, s, rec, c.OriginalName)
				continue
			}
			if prev, dup := storedAs[u.Name]; dup && prev != s {
				f.Duplicates++
				note("%s holds upload %s twice, as %s and %s", name, u.Name, prev, s)
			}
			storedAs[u.Name] = s
			if u.Outcome != FileOK {
				present[u.Name] = true
			}
			if u.Outcome == FileFailed {
				f.FailedPresent++
				note("%s lists %s (upload %s), whose upload failed", name, s, u.Name)
			}
			if rec != u.Record {
				f.Foreign++
				note("%s lists %s (upload %s) in record %s, not %s", name, s, u.Name, rec, u.Record)
			}
			if gone[s] {
				resurrected[s] = true
				note("%s lists %s (upload %s), whose delete was acknowledged", name, s, u.Name)
				continue
			}
			switch {
			case !asked || c.Status != 200:
				if u.Outcome == FileOK {
					lost[s] = true
				} else {
					unreadable[s] = true
				}
				note("%s lists %s (%s, %s) but serves it with status %s", name, s, u.origin(), u.Outcome, c.answer())
			case c.SHA256 != u.SHA256 || c.Size != u.Size || c.OriginalName != u.Name:
				corrupted[s] = true
				note("%s serves %s (upload %s) as %q, %d bytes with SHA-256 %.12s, not %d bytes with %.12s",
					name, s, u.Name, c.OriginalName, c.Size, c.SHA256, u.Size, u.SHA256)
			}
		}
		for _, u := range uploads {
			if u.Outcome != FileOK || gone[u.Stored] || maybeGone[u.Stored] {
				continue // deleted, or maybe: its absence is no loss
			}
			if _, ok := listed[u.Stored]; !ok {
				lost[u.Stored] = true
				note("%s lacks acknowledged file %s (%s) in record %s", name, u.Stored, u.origin(), u.Record)
			}
		}
		for _, s := range slices.Sorted(maps.Keys(gone)) {
			if c, ok := st.Files[s]; ok && c.Status == 200 {
				resurrected[s] = true
				if _, isListed := listed[s]; !isListed {
					note("%s serves %s, whose delete was acknowledged", name, s)
				}
			}
		}
		for _, c := range st.Files {
			if c.Status == 200 {
				f.Downloads++
				f.Bytes += c.Size
			}
		}
		if i == 0 {
			first = listed
		} else if !maps.Equal(listed, first) {
			f.Diverged++
			note("%s lists %d files, %s %d, not the same", name, len(listed), names[0], len(first))
		}
	}
	f.Lost, f.Unreadable, f.Corrupted, f.Resurrected = len(lost), len(unreadable), len(corrupted), len(resurrected)
	for n := range present {
		if byName[n].Outcome == FileUnknown {
			f.UnknownPresent++
		}
	}
	if f.Nodes == 0 {
		note("no node's final state was read")
	}
	return f, notes
}
