package api_test

import (
	"bytes"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestFilesClusterS3: on three nodes sharing an S3 bucket, a file uploaded
// through a follower downloads from every node, a record created with its
// files through another node too, and a one-time token spent on one node
// is spent on all (the spend is a command through the log: a replay on
// any node answers 410).
func TestFilesClusterS3(t *testing.T) {
	t.Parallel()
	eachS3(t, testFilesClusterS3)
}

func testFilesClusterS3(t *testing.T, peer *s3Peer) {
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	fl := c.Followers(t)
	a, b, leader := fl[0], fl[1], c.Leader(t)
	data(t, a, 200, "PATCH", settingsURL, peer.s3Settings(), admin)
	data(t, leader, 201, "POST", collectionsURL, usersCollection(), admin)
	data(t, leader, 201, "POST", collectionsURL, coll("papers", "base", []map[string]any{
		f("owner", "relation", "collection", "users"), f("many", "file", "multiple", true), f("once", "file", "oneTimeToken", true),
	}, "view_rule", "", "create_rule", `@request.auth.id != ""`, "update_rule", "owner = @request.auth.id"), admin)
	c.Sync(t)
	ann := bearer(signUp(t, b, "ann@example.com"))
	annID := data(t, b, 200, "GET", "/api/v1/auth/me", nil, ann)["id"].(string)
	rec := data(t, b, 201, "POST", "/api/v1/papers", map[string]any{"owner": annID}, ann)["id"].(string)
	c.Sync(t)

	content := pngBytes(t, 16, 16)
	obj := apitest.Obj(t, apitest.List(t, uploadOK(t, a, "papers", rec, "many", ann, file("file", "p.png", content)))[0])
	name := obj["filename"].(string)
	res, out := sendForm(t, b, "POST", "/api/v1/papers", ann, value("owner", annID), file("many", "q.txt", []byte("from b")))
	if res.StatusCode != 201 {
		t.Fatalf("multipart create through %s: %d %s", b.Stack.Node.NodeID(), res.StatusCode, out)
	}
	created := apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
	q := apitest.List(t, created["many"])[0].(string)
	once := apitest.Obj(t, uploadOK(t, leader, "papers", rec, "once", ann, file("file", "o.txt", []byte("once"))))["filename"].(string)
	c.Sync(t)
	for _, s := range c.Nodes {
		if st, body, _ := download(t, s, fileURL(name), nil); st != 200 || !bytes.Equal(body, content) {
			t.Errorf("%s: download of the file uploaded through %s: %d, %d bytes", s.Stack.Node.NodeID(), a.Stack.Node.NodeID(), st, len(body))
		}
		if st, body, _ := download(t, s, fileURL(q), nil); st != 200 || string(body) != "from b" {
			t.Errorf("%s: download of the created record's file: %d %q", s.Stack.Node.NodeID(), st, body)
		}
	}
	tok := data(t, a, 200, "POST", "/api/v1/files/papers/"+rec+"/once/"+once+"/token", nil, ann)["token"].(string)
	if st, body, _ := download(t, b, fileURL(once)+"?token="+tok, nil); st != 200 || string(body) != "once" {
		t.Fatalf("first use on %s: %d %q", b.Stack.Node.NodeID(), st, body)
	}
	for _, s := range []*apitest.Server{leader, a, b} {
		if st, body, _ := download(t, s, fileURL(once)+"?token="+tok, nil); st != http.StatusGone {
			t.Errorf("replay on %s: %d %s", s.Stack.Node.NodeID(), st, body)
		}
	}
}
