package api_test

import (
	"bufio"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestRealtimeSSECloseRacesKeepAlive: streams that end while their
// keep-alive ticker fires write nothing after their handler returned. A
// ping racing the return used to write to the finished response, which
// crashed the node (a nil-pointer panic in net/http's writer, found by the
// fault suite after a paused leader resumed). The keep-alive fires every
// millisecond here and many streams close at once; the node must answer
// afterwards.
func TestRealtimeSSECloseRacesKeepAlive(t *testing.T) {
	s := apitest.Start(t, apitest.Options{SSEKeepAlive: time.Millisecond})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/realtime?topics=*", nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					cancel()
					continue
				}
				rd := bufio.NewReader(res.Body)
				for j := 0; j < 3+i%5; j++ { // the connect frame and some pings
					if _, err := rd.ReadString('\n'); err != nil {
						break
					}
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
				cancel()
				res.Body.Close()
			}
		}()
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	res, body := s.Do(t, http.MethodGet, "/_/health", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("after the streams closed: %d %s", res.StatusCode, body)
	}
}
