package jepsen_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"svcd/jepsen/harness"
)

// TestEncryptionKeyOnJoin: only n1 is given SVC_ENCRYPTION_KEY; n2 and n3
// receive it when they join (kept in encryption.key, mode 0600), so a
// value sealed through one node reads in plain text through the others,
// and every node shows the same key fingerprints.
func TestEncryptionKeyOnJoin(t *testing.T) {
	skipShort(t)
	c := harness.StartCluster(t, 3, harness.ClusterOptions{
		NodeEnv: map[string][]string{"n1": {"SVC_ENCRYPTION_KEY=" + strings.Repeat("k", 32)}},
	})
	createCollectionAll(t, c, `{"name":"vault","type":"base","fields":[{"name":"s","type":"text","encrypted":true}],"view_rule":"","create_rule":""}`)
	nodes := c.Nodes()
	created := mustDo(t, c.Client(nodes[1]), "POST", "/api/v1/vault", map[string]any{"s": "plain words"}, http.StatusCreated)
	var rec struct{ Data struct{ ID string } }
	created.JSON(&rec)
	var prints []string
	for _, nd := range nodes {
		got := mustDo(t, c.Client(nd).MinIndex(created.Index()), "GET", "/api/v1/vault/"+rec.Data.ID, nil, http.StatusOK)
		if !strings.Contains(string(got.Body), `"s":"plain words"`) {
			t.Fatalf("%s: %s", nd.Name, got.Body)
		}
		fp, err := c.Admin(nd).Do(context.Background(), "GET", "/api/v1/admin/security/fingerprints", nil)
		if err != nil || fp.Status != http.StatusOK || !strings.Contains(string(fp.Body), `"encryption":"sha256:`) {
			t.Fatalf("%s fingerprints: %v %v", nd.Name, fp, err)
		}
		prints = append(prints, string(fp.Body))
	}
	if prints[0] != prints[1] || prints[1] != prints[2] {
		t.Fatalf("fingerprints differ: %v", prints)
	}
	for _, nd := range nodes[1:] {
		st, err := os.Stat(filepath.Join(nd.DataDir(), "encryption.key"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: encryption.key %v %v", nd.Name, st, err)
		}
	}
}
