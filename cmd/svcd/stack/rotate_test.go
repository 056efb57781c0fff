package stack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
)

const (
	oldEncKey = "old-key-old-key-old-key-old-key!" // 32 characters
	newEncKey = "new-key-new-key-new-key-new-key!"
)

// TestRotateKey: values sealed under an old key stay readable once the
// node runs with the new key and the old one in SVC_ENCRYPTION_KEY_OLD;
// rotate-key re-seals all of them (settings and fields, plain values
// stored before any key included) in one command; a second run finds
// nothing to do; afterwards the old key is no longer needed.
func TestRotateKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_x", Role: engine.RoleOwner}

	n := replOpen(t, stack.Config{DataDir: dir, EncryptionKey: oldEncKey})
	if _, _, err := n.Engine.PatchSettings(ctx, []byte(`{"smtp.pass":"mail-secret"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"vault","type":"base","fields":[{"name":"s","type":"text","encrypted":true}]}`)); err != nil {
		t.Fatal(err)
	}
	hook, _, err := n.Webhooks.Create(ctx, []byte(`{"url":"https://hooks.example.com/in","events":["e"],"secret":"hook-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range []string{"one", "two", "three"} {
		rec, _, err := n.Engine.Records().CreateRecord(ctx, admin, "vault", []byte(`{"s":"`+v+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(rec.JSON, &m)
		ids = append(ids, m["id"].(string))
	}
	n.close(t)

	n = replOpen(t, stack.Config{DataDir: dir, EncryptionKey: newEncKey, EncryptionKeyOld: []string{oldEncKey}})
	read := func(n *replNode) []string {
		t.Helper()
		var out []string
		for _, id := range ids {
			rec, err := n.Engine.Records().GetRecord(ctx, admin, "vault", id, "", "")
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(rec.JSON, &m)
			out = append(out, m["s"].(string))
		}
		return out
	}
	if got := strings.Join(read(n), ","); got != "one,two,three" || n.Engine.Setting("smtp.pass") != "mail-secret" {
		t.Fatalf("with the old key in the ring: %s, %q", got, n.Engine.Setting("smtp.pass"))
	}
	res, _, err := n.Engine.RotateKey(ctx)
	if err != nil || res.Settings != 1 || res.Values != 3 || res.Secrets != 1 || res.Skipped != 0 {
		t.Fatalf("rotate: %+v %v", res, err)
	}
	if res, _, err := n.Engine.RotateKey(ctx); err != nil || res.Settings+res.Values+res.Secrets+res.Skipped != 0 {
		t.Fatalf("second rotate: %+v %v", res, err)
	}
	n.close(t)

	n = replOpen(t, stack.Config{DataDir: dir, EncryptionKey: newEncKey})
	if got := strings.Join(read(n), ","); got != "one,two,three" || n.Engine.Setting("smtp.pass") != "mail-secret" {
		t.Fatalf("with the new key alone after rotating: %s, %q", got, n.Engine.Setting("smtp.pass"))
	}
	// The webhook still signs: its secret opens with the new key alone.
	if w, err := n.Webhooks.Get(ctx, hook.ID, true); err != nil || w.Secret != "hook-secret" {
		t.Fatalf("the webhook's secret with the new key alone after rotating: %+v %v", w, err)
	}
	n.close(t)

	n = replOpen(t, stack.Config{DataDir: dir})
	if got := n.Engine.Setting("smtp.pass"); got != "" {
		t.Fatalf("without a key a sealed secret must not read as anything: %q", got)
	}
	n.close(t)
}
