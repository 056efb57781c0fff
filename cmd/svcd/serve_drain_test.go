package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestServeShutdownEndsStreams: SIGTERM with streams open (realtime over
// SSE and WebSocket, PocketBase's realtime) stops the node at once: each
// stream is ended (the WebSocket with 1001 Going Away), the drain does not
// wait out its bound for them, and no "drain incomplete" is logged.
func TestServeShutdownEndsStreams(t *testing.T) {
	n := startServe(t, t.TempDir(), nil)
	line := n.wait(t, regexp.MustCompile(`"msg":"svcd serving"`))
	var banner map[string]any
	if err := json.Unmarshal([]byte(line), &banner); err != nil {
		t.Fatal(err)
	}
	health, _ := banner["health"].(string)
	base, _, _ := strings.Cut(strings.TrimPrefix(health, "http://"), "/")
	if base == "" {
		t.Fatalf("no address in the banner: %s", line)
	}
	ended := make(chan string, 3)
	for _, path := range []string{"/api/v1/realtime", "/api/realtime"} {
		res, err := http.Get("http://" + base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		if _, err := br.ReadString('\n'); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		go func() {
			for {
				if _, err := br.ReadString('\n'); err != nil {
					ended <- path
					return
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+base+"/realtime", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if _, _, err := ws.Read(ctx); err != nil { // {"type":"connected"}
		t.Fatal(err)
	}
	wsClosed := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				wsClosed <- websocket.CloseStatus(err)
				return
			}
		}
	}()

	start := time.Now()
	lines := n.stop(t)
	took := time.Since(start)
	if took > 5*time.Second {
		t.Errorf("SIGTERM to exit with streams open took %v (the drain waited for them)", took)
	}
	for range 2 {
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("an SSE stream was not ended")
		}
	}
	select {
	case code := <-wsClosed:
		if code != websocket.StatusGoingAway {
			t.Errorf("the WebSocket closed with %v, want 1001 Going Away", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the WebSocket was not closed")
	}
	for _, l := range lines {
		if strings.Contains(l, "drain incomplete") {
			t.Errorf("the drain was cut: %s", l)
		}
	}
}
