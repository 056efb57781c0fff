// Command mkfixture makes the PocketBase data directory the importer's
// tests read (internal/pbimport/testdata/pb_data_v0.40.4.tar.gz) with a
// real PocketBase, through its own Go API: the collections, records,
// users, two superusers, OAuth2 links and files below. It is its own module (PocketBase
// v0.40.4 needs Go 1.27; svcd stays on its own toolchain), run by
// mkfixture.sh.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"

	"github.com/pocketbase/pocketbase/core"
	_ "github.com/pocketbase/pocketbase/migrations" // the system collections
	"github.com/pocketbase/pocketbase/tools/filesystem"
	"github.com/pocketbase/pocketbase/tools/types"
)

func main() {
	out := flag.String("out", "", "the pb_data directory to create (must not exist)")
	flag.Parse()
	if *out == "" {
		log.Fatal("usage: mkfixture -out DIR")
	}
	if _, err := os.Stat(*out); err == nil {
		log.Fatalf("%s exists", *out)
	}
	app := core.NewBaseApp(core.BaseAppConfig{DataDir: *out})
	if err := app.Bootstrap(); err != nil {
		log.Fatal(err)
	}
	if err := app.RunAllMigrations(); err != nil {
		log.Fatal(err)
	}
	if err := build(app); err != nil {
		log.Fatal(err)
	}
	if _, err := app.DB().NewQuery("PRAGMA wal_checkpoint(TRUNCATE)").Execute(); err != nil {
		log.Fatal(err)
	}
	if _, err := app.DB().NewQuery("VACUUM").Execute(); err != nil {
		log.Fatal(err)
	}
	if err := app.ResetBootstrapState(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("pb_data written to", *out)
}

// The passwords the importer's tests sign in with. They are 8 characters,
// PocketBase's minimum (svcd asks 12 of new passwords): imported hashes
// keep working whatever svcd's policy.
const (
	AlicePassword = "alice123"
	BobPassword   = "bobpass9"
	SuperPassword = "superpass123"
	OpsPassword   = "opspass1234"
)

func build(app core.App) error {
	su, err := app.FindCollectionByNameOrId(core.CollectionNameSuperusers)
	if err != nil {
		return err
	}
	admin := core.NewRecord(su)
	admin.SetEmail("admin@example.com")
	admin.SetPassword(SuperPassword)
	if err := app.Save(admin); err != nil {
		return fmt.Errorf("superuser: %w", err)
	}
	// A second superuser besides the first one (the one an installer
	// makes): both become svcd admins.
	ops := core.NewRecord(su)
	ops.SetEmail("ops@example.com")
	ops.SetPassword(OpsPassword)
	if err := app.Save(ops); err != nil {
		return fmt.Errorf("superuser ops: %w", err)
	}

	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		return err
	}
	users.AuthRule = types.Pointer("verified = true") // reported: svcd has no auth rule
	if err := app.Save(users); err != nil {
		return fmt.Errorf("users: %w", err)
	}
	alice, err := user(app, users, "alice@example.com", AlicePassword, "Alice", true)
	if err != nil {
		return err
	}
	bob, err := user(app, users, "bob@example.com", BobPassword, "Bob", false)
	if err != nil {
		return err
	}

	// OAuth2 links (_externalAuths): alice's with a provider svcd knows
	// (imported), bob's with one it does not (reported), and one of a
	// superuser (not a record svcd imports: reported).
	for _, l := range []struct {
		rec                  *core.Record
		provider, providerID string
	}{
		{alice, "google", "google-sub-alice"},
		{bob, "kakao", "kakao-sub-bob"},
		{ops, "github", "github-sub-ops"},
	} {
		ea := core.NewExternalAuth(app)
		ea.SetCollectionRef(l.rec.Collection().Id)
		ea.SetRecordRef(l.rec.Id)
		ea.SetProvider(l.provider)
		ea.SetProviderId(l.providerID)
		if err := app.Save(ea); err != nil {
			return fmt.Errorf("external auth %s: %w", l.provider, err)
		}
	}

	posts := core.NewBaseCollection("posts")
	posts.ListRule = types.Pointer("published = true")
	posts.ViewRule = types.Pointer("")
	posts.CreateRule = types.Pointer("@request.auth.id != ''")
	posts.UpdateRule = types.Pointer("author = @request.auth.id")
	posts.DeleteRule = nil
	posts.Fields.Add(
		&core.TextField{Name: "title", Required: true, Max: 200},
		&core.EditorField{Name: "body"},
		&core.NumberField{Name: "views", OnlyInt: true},
		&core.BoolField{Name: "published"},
		&core.DateField{Name: "published_at"},
		&core.SelectField{Name: "tags", Values: []string{"go", "raft", "sqlite"}, MaxSelect: 3},
		&core.SelectField{Name: "status", Values: []string{"draft", "live"}, MaxSelect: 1},
		&core.RelationField{Name: "author", CollectionId: users.Id, MaxSelect: 1},
		&core.FileField{Name: "attachments", MaxSelect: 5, MaxSize: 1 << 20},
		&core.JSONField{Name: "meta"},
		&core.URLField{Name: "link"},
		&core.EmailField{Name: "contact"},
		&core.GeoPointField{Name: "place"},
		&core.AutodateField{Name: "created", OnCreate: true},
		&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
	)
	posts.AddIndex("idx_posts_title", true, "title", "")
	posts.AddIndex("idx_posts_status_views", false, "status, views", "")
	if err := app.Save(posts); err != nil {
		return fmt.Errorf("posts: %w", err)
	}

	pngBytes, err := tinyPNG()
	if err != nil {
		return err
	}
	p1 := core.NewRecord(posts)
	p1.Set("title", "Hello from PocketBase")
	p1.Set("body", "<p>first <b>post</b></p>")
	p1.Set("views", 42)
	p1.Set("published", true)
	p1.Set("published_at", "2026-01-02 03:04:05.678Z")
	p1.Set("tags", []string{"go", "sqlite"})
	p1.Set("status", "live")
	p1.Set("author", alice.Id)
	p1.Set("meta", map[string]any{"lang": "en", "score": 9.5})
	p1.Set("link", "https://example.com/hello")
	p1.Set("contact", "alice@example.com")
	p1.Set("place", map[string]any{"lon": 2.3522, "lat": 48.8566})
	f1, _ := filesystem.NewFileFromBytes(pngBytes, "pixel.png")
	f2, _ := filesystem.NewFileFromBytes([]byte("hello, file\n"), "notes.txt")
	p1.Set("attachments", []any{f1, f2})
	if err := app.Save(p1); err != nil {
		return fmt.Errorf("post 1: %w", err)
	}
	p2 := core.NewRecord(posts)
	p2.Set("id", "hellocustomid01")
	p2.Set("title", "A draft with a custom id")
	p2.Set("status", "draft")
	p2.Set("author", bob.Id)
	if err := app.Save(p2); err != nil {
		return fmt.Errorf("post 2: %w", err)
	}

	// A collection named like one of svcd's reserved names: renamed.
	files := core.NewBaseCollection("files")
	files.ListRule = types.Pointer("")
	files.ViewRule = types.Pointer("")
	files.Fields.Add(&core.TextField{Name: "label"})
	if err := app.Save(files); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	fr := core.NewRecord(files)
	fr.Set("label", "in a reserved name")
	if err := app.Save(fr); err != nil {
		return err
	}

	view := core.NewViewCollection("post_stats")
	view.ListRule = types.Pointer("")
	view.ViewRule = types.Pointer("")
	view.ViewQuery = "SELECT id, title, views FROM posts"
	if err := app.Save(view); err != nil {
		return fmt.Errorf("post_stats: %w", err)
	}
	return nil
}

func user(app core.App, users *core.Collection, email, password, name string, verified bool) (*core.Record, error) {
	u := core.NewRecord(users)
	u.SetEmail(email)
	u.SetPassword(password)
	u.SetVerified(verified)
	u.Set("name", name)
	if err := app.Save(u); err != nil {
		return nil, fmt.Errorf("user %s: %w", email, err)
	}
	return u, nil
}

// tinyPNG is a 2x2 image.
func tinyPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	img.Set(1, 1, color.RGBA{0, 0, 255, 255})
	var b bytes.Buffer
	err := png.Encode(&b, img)
	return b.Bytes(), err
}
