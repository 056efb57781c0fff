package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// sseStream is a subscription over GET /api/v1/realtime?topics=coll, read
// as plain HTTP streaming: frames of "event:", "id:" and "data:" lines ended
// by a blank line; comment lines (": ping") are skipped.
type sseStream struct {
	body   io.ReadCloser
	br     *bufio.Reader
	cancel context.CancelFunc
	once   sync.Once
}

// dialSSE opens the stream (topics at connect) and returns once the
// subscribed frame arrived. The request outlives ctx: only close ends it.
func dialSSE(ctx context.Context, hc *http.Client, base, coll string) (eventStream, error) {
	sctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, base+"/api/v1/realtime?topics="+url.QueryEscape(coll), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	stop := context.AfterFunc(ctx, cancel) // ctx bounds the dial only
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		cancel()
		return nil, &apiError{Method: http.MethodGet, Path: req.URL.Path, Status: resp.StatusCode, Msg: errorMessage(raw)}
	}
	s := &sseStream{body: resp.Body, br: bufio.NewReaderSize(resp.Body, 8<<10), cancel: cancel}
	err = awaitSubscribed(ctx, s)
	if !stop() || err != nil {
		s.close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return s, nil
}

// next reads frames until one with data. ctx is not watched: close ends a
// blocked read.
func (s *sseStream) next(_ context.Context) (rtEvent, error) {
	var data []byte
	for {
		line, err := s.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return rtEvent{}, errors.New("SSE line over 8 KiB")
			}
			return rtEvent{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data != nil {
				return decodeEvent(data)
			}
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data[:0], bytes.TrimPrefix(line[5:], []byte(" "))...)
		case line[0] == ':', bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
			// The data carries the type and the event id.
		default:
			return rtEvent{}, fmt.Errorf("unexpected SSE line %q", truncate(string(line), 120))
		}
	}
}

func (s *sseStream) close() {
	s.once.Do(func() {
		s.cancel()
		s.body.Close()
	})
}
