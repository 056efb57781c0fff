package upgrade_test

import (
	"os"
	"testing"

	"svcd/jepsen/harness"
)

func TestMain(m *testing.M) {
	code := m.Run()
	harness.RemoveBinary()
	os.Exit(code)
}
