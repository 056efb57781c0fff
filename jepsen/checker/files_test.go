package checker

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheckFiles: the files checker passes a clean history (an unknown
// upload present on every node, another absent, a file deleted, another
// whose delete is unknown and that stayed) and catches a lost file (not
// listed, or listed and not served), a corrupted file (other bytes,
// another length, another file's name), a corrupt read during the run, a
// deleted file that comes back, a failed upload present, a file nobody
// uploaded, one in the wrong record, one stored twice, and nodes that
// diverge.
func TestCheckFiles(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	uploads := []FileUpload{
		{Name: "a.bin", Record: "r1", Size: 10, SHA256: "aaaa", Outcome: FileOK, Stored: "s-a.bin"},
		{Name: "b.bin", Record: "r2", Size: 2000, SHA256: "bbbb", Outcome: FileOK, Stored: "s-b.bin", Node: "n1", Sent: t0.Add(time.Second)},
		{Name: "c.bin", Record: "r1", Size: 30, SHA256: "cccc", Outcome: FileUnknown},                                                               // applied
		{Name: "d.bin", Record: "r2", Size: 40, SHA256: "dddd", Outcome: FileUnknown},                                                               // not applied
		{Name: "e.bin", Record: "r1", Size: 50, SHA256: "eeee", Outcome: FileFailed},                                                                // not applied
		{Name: "f.bin", Record: "r2", Size: 60, SHA256: "ffff", Outcome: FileOK, Stored: "s-f.bin"},                                                 // deleted
		{Name: "g.bin", Record: "r1", Size: 70, SHA256: "9999", Outcome: FileOK, Stored: "s-g.bin"},                                                 // delete unknown, kept
		{Name: "h.bin", Record: "r2", Size: 80, SHA256: "8888", Outcome: FileOK, Stored: "s-h.bin"},                                                 // delete unknown, gone
		{Name: "i.bin", Record: "r1", Size: 1 << 20, SHA256: "7777", Outcome: FileOK, Stored: "s-i.bin", Node: "n2", Sent: t0.Add(2 * time.Second)}, // large
	}
	deletes := []FileDelete{
		{Stored: "s-f.bin", Outcome: FileOK},
		{Stored: "s-g.bin", Outcome: FileUnknown},
		{Stored: "s-h.bin", Outcome: FileUnknown},
	}
	reads := []FileRead{
		{Node: "n1", Stored: "s-a.bin", Status: 200, SHA256: "aaaa"},
		{Node: "n2", Stored: "s-b.bin", Status: 404}, // bytes out of reach
		{Node: "n3", Stored: "s-b.bin", Status: 503},
	}
	ok := func(u FileUpload) FileCopy {
		return FileCopy{Status: 200, SHA256: u.SHA256, Size: u.Size, OriginalName: u.Name}
	}
	good := FileNode{
		Records: map[string][]string{"r1": {"s-a.bin", "s-c.bin", "s-g.bin", "s-i.bin"}, "r2": {"s-b.bin"}},
		Files: map[string]FileCopy{
			"s-a.bin": ok(uploads[0]), "s-b.bin": ok(uploads[1]), "s-c.bin": ok(uploads[2]),
			"s-g.bin": ok(uploads[6]), "s-i.bin": ok(uploads[8]),
			"s-f.bin": {Status: 404}, "s-h.bin": {Status: 404},
		},
	}
	clone := func(n FileNode) FileNode {
		out := FileNode{Records: map[string][]string{}, Files: maps.Clone(n.Files)}
		for k, v := range n.Records {
			out.Records[k] = slices.Clone(v)
		}
		return out
	}
	nodes := func(ns ...FileNode) map[string]FileNode {
		out := map[string]FileNode{}
		for i, n := range ns {
			out["n"+string(rune('1'+i))] = n
		}
		return out
	}
	f, notes := CheckFiles(uploads, deletes, reads, nodes(good, clone(good), clone(good)))
	if !f.Valid() || f.UploadsOK != 6 || f.UploadsUnknown != 2 || f.UploadsFailed != 1 || f.UnknownPresent != 1 ||
		f.DeletesOK != 1 || f.DeletesUnknown != 2 || f.Reads != 3 || f.ReadsServed != 1 || f.ReadsNoBytes != 1 || f.Nodes != 3 ||
		f.Downloads != 15 || f.Bytes != 3*(10+2000+30+70+1<<20) {
		t.Fatalf("clean history judged %s: %v", f, notes)
	}

	// Each case changes one node's state (the second of three).
	without := func(rec, s string) func(*FileNode) {
		return func(n *FileNode) {
			n.Records[rec] = slices.DeleteFunc(n.Records[rec], func(x string) bool { return x == s })
		}
	}
	list := func(rec, s string, c FileCopy) func(*FileNode) {
		return func(n *FileNode) { n.Records[rec] = append(n.Records[rec], s); n.Files[s] = c }
	}
	serve := func(s string, c FileCopy) func(*FileNode) { return func(n *FileNode) { n.Files[s] = c } }
	flipped := ok(uploads[1])
	flipped.SHA256 = "bbbc"
	short := ok(uploads[8])
	short.Size--
	renamed := ok(uploads[0])
	renamed.OriginalName = "c.bin"
	foreign := FileCopy{Status: 200, SHA256: "zzzz", Size: 3, OriginalName: "z.bin"}

	cases := []struct {
		name   string
		change func(*FileNode)
		reads  []FileRead
		want   func(FilesFigures) bool
		note   string
	}{
		{"lost: not listed", without("r2", "s-b.bin"), nil,
			func(f FilesFigures) bool { return f.Lost == 1 && f.Diverged == 1 }, "n2 lacks acknowledged file s-b.bin (upload b.bin of 2000 bytes through n1 at 10:00:01.000) in record r2"},
		{"lost: listed, not served", serve("s-i.bin", FileCopy{Status: 404, Error: "gone"}), nil,
			func(f FilesFigures) bool { return f.Lost == 1 && f.Corrupted == 0 }, "n2 lists s-i.bin (upload i.bin of 1048576 bytes through n2 at 10:00:02.000, ok) but serves it with status 404 (gone)"},
		{"lost: no answer", serve("s-a.bin", FileCopy{}), nil,
			func(f FilesFigures) bool { return f.Lost == 1 }, "serves it with status 0"},
		{"corrupted: a flipped byte", serve("s-b.bin", flipped), nil,
			func(f FilesFigures) bool { return f.Corrupted == 1 && f.Lost == 0 }, "n2 serves s-b.bin (upload b.bin) as \"b.bin\", 2000 bytes with SHA-256 bbbc"},
		{"corrupted: truncated", serve("s-i.bin", short), nil,
			func(f FilesFigures) bool { return f.Corrupted == 1 }, "1048575 bytes"},
		{"corrupted: another file's metadata", serve("s-a.bin", renamed), nil,
			func(f FilesFigures) bool { return f.Corrupted == 1 }, "as \"c.bin\""},
		{"corrupted: an unknown upload's bytes", serve("s-c.bin", FileCopy{Status: 200, SHA256: "cccd", Size: 30, OriginalName: "c.bin"}), nil,
			func(f FilesFigures) bool { return f.Corrupted == 1 }, "n2 serves s-c.bin (upload c.bin)"},
		{"unreadable unknown upload", serve("s-c.bin", FileCopy{Status: 404}), nil,
			func(f FilesFigures) bool { return f.Unreadable == 1 && f.Lost == 0 }, "no upload can be matched"},
		{"corrupt read", nil, []FileRead{{Node: "n3", Stored: "s-b.bin", Status: 200, SHA256: "bbbc"}},
			func(f FilesFigures) bool { return f.CorruptReads == 1 }, "a download of s-b.bin on n3 during the run"},
		{"read gone", nil, []FileRead{{Node: "n1", Stored: "s-i.bin", Status: 404, Gone: true}},
			func(f FilesFigures) bool { return f.ReadsGone == 1 }, "a download of s-i.bin on n1 during the run answered that the node knows no such file"},
		{"resurrected: listed", list("r2", "s-f.bin", ok(uploads[5])), nil,
			func(f FilesFigures) bool { return f.Resurrected == 1 }, "n2 lists s-f.bin (upload f.bin), whose delete was acknowledged"},
		{"resurrected: served", serve("s-f.bin", ok(uploads[5])), nil,
			func(f FilesFigures) bool { return f.Resurrected == 1 && f.Diverged == 0 }, "n2 serves s-f.bin, whose delete was acknowledged"},
		{"failed upload present", list("r1", "s-e.bin", ok(uploads[4])), nil,
			func(f FilesFigures) bool { return f.FailedPresent == 1 }, "whose upload failed"},
		{"foreign file", list("r1", "s-z.bin", foreign), nil,
			func(f FilesFigures) bool { return f.Foreign == 1 }, "named \"z.bin\": no upload was sent so"},
		{"wrong record", func(n *FileNode) { without("r2", "s-b.bin")(n); n.Records["r1"] = append(n.Records["r1"], "s-b.bin") }, nil,
			func(f FilesFigures) bool { return f.Foreign == 1 && f.Lost == 0 }, "in record r1, not r2"},
		{"listed twice", list("r2", "s-a.bin", ok(uploads[0])), nil,
			func(f FilesFigures) bool { return f.Duplicates == 1 }, "n2 lists s-a.bin twice"},
		{"stored twice", list("r1", "s-a2.bin", ok(uploads[0])), nil,
			func(f FilesFigures) bool { return f.Duplicates == 1 }, "holds upload a.bin twice"},
		{"diverged: an unknown upload on one node only", without("r1", "s-c.bin"), nil,
			func(f FilesFigures) bool { return f.Diverged == 1 && f.Lost == 0 }, "n2 lists 4 files, n1 5"},
	}
	for _, c := range cases {
		n2 := clone(good)
		if c.change != nil {
			c.change(&n2)
		}
		f, notes := CheckFiles(uploads, deletes, append(slices.Clone(reads), c.reads...), nodes(good, n2, clone(good)))
		if all := strings.Join(notes, "\n"); f.Valid() || !c.want(f) || !strings.Contains(all, c.note) {
			t.Errorf("%s: judged %s, notes %q; want it caught with %q", c.name, f, all, c.note)
		}
	}

	if f, notes := CheckFiles(uploads, deletes, reads, nil); f.Valid() || !strings.Contains(strings.Join(notes, ""), "no node's final state") {
		t.Errorf("no node read: judged %s, %v", f, notes)
	}
	// A delete answered 404 names the loss it saw; a 404 for a file
	// every node still holds is a wrong answer, caught as well.
	gone := append(slices.Clone(deletes), FileDelete{Stored: "s-a.bin", Outcome: FileFailed, Missing: true})
	n := clone(good)
	without("r1", "s-a.bin")(&n)
	f, notes = CheckFiles(uploads, gone, reads, nodes(n, clone(n), clone(n)))
	if all := strings.Join(notes, "\n"); f.Valid() || f.Lost != 1 || f.MissingOnDelete != 1 || !strings.Contains(all, "a delete of acknowledged file s-a.bin (a.bin) answered 404") {
		t.Errorf("a delete that found its file gone: judged %s, %q", f, all)
	}
	if f, notes := CheckFiles(uploads, gone, reads, nodes(good, clone(good))); f.Valid() || f.MissingOnDelete != 1 || f.Lost != 0 {
		t.Errorf("a delete answered 404 for a file every node holds: judged %s, %q", f, notes)
	}
}
