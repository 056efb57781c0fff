package pbimport_test

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"svcd/internal/pbimport"
	"svcd/internal/pbschema"
)

// fixture unpacks the pb_data made by a real PocketBase v0.40.4
// (testdata/mkfixture) and returns its path.
func fixture(t *testing.T) string {
	t.Helper()
	dir, err := pbimport.Unpack("testdata/pb_data_v0.40.4.tar.gz", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadFixture(t *testing.T) {
	dir := fixture(t)
	before, _ := os.ReadFile(filepath.Join(dir, "data.db"))
	src, err := pbimport.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	colls, err := src.Collections()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pbimport.Collection{}
	for _, c := range colls {
		byName[c.Name] = c
	}
	for _, name := range []string{"_superusers", "users", "posts", "files", "post_stats", "_externalAuths"} {
		if byName[name] == nil {
			t.Fatalf("no collection %s among %d", name, len(colls))
		}
	}
	posts := byName["posts"]
	if posts.Type != "base" || *posts.ListRule != "published = true" || *posts.ViewRule != "" || posts.DeleteRule != nil {
		t.Errorf("posts rules: list %v view %v delete %v", posts.ListRule, posts.ViewRule, posts.DeleteRule)
	}
	if len(posts.Indexes) != 2 || !strings.Contains(posts.Indexes[0], "UNIQUE") {
		t.Errorf("posts indexes %v", posts.Indexes)
	}
	if f, ok := posts.Field("tags"); !ok || f.Type != "select" || !f.Multiple() {
		t.Errorf("tags field %+v", f)
	}
	if f, ok := posts.Field("author"); !ok || f.Type != "relation" || f.Multiple() || f.Options["collectionId"] != byName["users"].ID {
		t.Errorf("author field %+v", f)
	}
	if q := byName["post_stats"].ViewQuery(); !strings.Contains(q, "FROM posts") {
		t.Errorf("view query %q", q)
	}
	if byName["users"].Options["authRule"] != "verified = true" {
		t.Errorf("users options %v", byName["users"].Options)
	}

	var recs []pbimport.Record
	if err := src.Records(posts, func(r pbimport.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d posts", len(recs))
	}
	p := recs[0]
	if p["views"] != float64(42) || p["published"] != true || !slices.Equal(p["tags"].([]string), []string{"go", "sqlite"}) ||
		p["status"] != "live" || p["meta"].(map[string]any)["lang"] != "en" {
		t.Errorf("post 1 = %v", p)
	}
	if d, err := pbschema.ParseDate(p["published_at"].(string)); err != nil || d.Year() != 2026 || d.Nanosecond() != 678e6 {
		t.Errorf("published_at %v %v", d, err)
	}
	if recs[1].ID() != "hellocustomid01" || recs[1]["published_at"] != "" || len(recs[1]["attachments"].([]string)) != 0 {
		t.Errorf("post 2 = %v", recs[1])
	}
	files := p["attachments"].([]string)
	if len(files) != 2 {
		t.Fatalf("attachments %v", files)
	}
	b, err := os.ReadFile(src.FilePath(posts, p.ID(), files[1]))
	if err != nil || string(b) != "hello, file\n" {
		t.Errorf("file %s: %q %v", files[1], b, err)
	}

	// The users' bcrypt hashes are PocketBase's own: the 8-character
	// passwords the fixture set verify against them.
	var users []pbimport.Record
	if err := src.Records(byName["users"], func(r pbimport.Record) error { users = append(users, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0]["email"] != "alice@example.com" || users[0]["verified"] != true {
		t.Fatalf("users %v", users)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(users[0]["password"].(string)), []byte("alice123")); err != nil {
		t.Errorf("alice's hash: %v", err)
	}
	var views []pbimport.Record
	if err := src.Records(byName["post_stats"], func(r pbimport.Record) error { views = append(views, r); return nil }); err != nil || len(views) != 2 {
		t.Errorf("view rows %v %v", views, err)
	}

	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "data.db"))
	if string(before) != string(after) {
		t.Error("reading changed pb_data/data.db")
	}
}

func TestOpenRefusesOtherDirectories(t *testing.T) {
	if _, err := pbimport.Open(t.TempDir()); err == nil {
		t.Error("an empty directory opened")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pbimport.Open(dir); err == nil || !strings.Contains(err.Error(), "_collections") {
		t.Errorf("an empty database: %v", err)
	}
}

// TestUnpackRefusesEscapes: an archive entry that would land outside the
// directory, or a link, is refused.
func TestUnpackRefusesEscapes(t *testing.T) {
	for _, h := range []*tar.Header{
		{Name: "../evil/data.db", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "pb_data/data.db", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		p := filepath.Join(t.TempDir(), "x.tar.gz")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		gz := gzip.NewWriter(f)
		tw := tar.NewWriter(gz)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Close()
		gz.Close()
		f.Close()
		dir := t.TempDir()
		if _, err := pbimport.Unpack(p, filepath.Join(dir, "in")); err == nil {
			t.Errorf("%s (%c) unpacked", h.Name, h.Typeflag)
		}
		if _, err := os.Stat(filepath.Join(dir, "evil")); err == nil {
			t.Errorf("%s escaped", h.Name)
		}
	}
}

// TestReadAccounts reads the fixture's superusers (with PocketBase's
// bcrypt hashes, which match their passwords) and OAuth2 links.
func TestReadAccounts(t *testing.T) {
	src, err := pbimport.Open(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sus, err := src.Superusers()
	if err != nil || len(sus) != 2 {
		t.Fatalf("superusers %+v %v", sus, err)
	}
	if sus[1].Email != "ops@example.com" || sus[1].Created < 1767225600 || sus[1].Updated < sus[1].Created ||
		bcrypt.CompareHashAndPassword([]byte(sus[1].PasswordHash), []byte("opspass1234")) != nil {
		t.Errorf("ops %+v", sus[1])
	}
	eas, err := src.ExternalAuths()
	if err != nil || len(eas) != 3 {
		t.Fatalf("external auths %+v %v", eas, err)
	}
	var got []string
	for _, ea := range eas {
		got = append(got, ea.Provider+":"+ea.ProviderID)
		if ea.RecordRef == "" || ea.CollectionRef == "" || ea.Created == 0 {
			t.Errorf("link %+v", ea)
		}
	}
	if !slices.Equal(got, []string{"google:google-sub-alice", "kakao:kakao-sub-bob", "github:github-sub-ops"}) {
		t.Errorf("links %v", got)
	}
	if eas[2].RecordRef != sus[1].ID {
		t.Errorf("the github link is %s's, want the superuser %s", eas[2].RecordRef, sus[1].ID)
	}
}
