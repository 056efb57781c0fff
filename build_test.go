package svcd_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBuildNeedsFTS5Tag: svcd built without the sqlite_fts5 tag would
// answer 500 for every collection with a searchable field, so such a build
// must not compile, and the compiler's message must name the fix. (The
// first run compiles go-sqlite3 without the tag: about 45 s on two cores.)
func TestBuildNeedsFTS5Tag(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles go-sqlite3 a second time")
	}
	cmd := exec.Command(goTool(t), "build", "-o", "/dev/null", "./cmd/svcd")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("go build ./cmd/svcd without -tags sqlite_fts5 succeeded: the binary would fail at run time")
	}
	if !strings.Contains(string(out), "build_tag_sqlite_fts5") || !strings.Contains(string(out), "make_build") {
		t.Fatalf("the failed build does not name the fix:\n%s", out)
	}
}
