package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"svcd/engine"
	"svcd/internal/logfile"
)

// ?node=all: the node that takes the request asks every member for its
// first page×perPage lines over HTTP, with the caller's own credentials
// and fanoutHeader (so the member answers for itself and asks no one),
// merges them newest first, and cuts the page. A member that does not
// answer within peerLogsTimeout, or answers an error, is listed in
// failed; the others' lines are still answered.

// fanoutHeader marks a request sent by a gathering node.
const fanoutHeader = "X-Svc-Logs-Fanout"

// maxFanoutLines bounds page×perPage under ?node=all: each member sends
// that many lines.
const maxFanoutLines = 5000

// peerLogsTimeout bounds one member's answer.
const peerLogsTimeout = 5 * time.Second

// perPageCap is the largest page: MaxPerPage, or maxFanoutLines for a
// gathering node's request.
func (s *Server) perPageCap(r *http.Request) int {
	if r.Header.Get(fanoutHeader) != "" {
		return maxFanoutLines
	}
	return logfile.MaxPerPage
}

// memberPage is one member's part of a gathered answer.
type memberPage struct {
	id   string
	page logfile.Page
	err  error
}

// gatherLogs answers q from every member of the cluster.
func (s *Server) gatherLogs(r *http.Request, q logfile.Query, search *searchBody) (logsAnswer, error) {
	if q.Page > maxFanoutLines/q.PerPage {
		return logsAnswer{}, &engine.Error{Kind: engine.KindBadRequest,
			Message: fmt.Sprintf("With node=all, page × perPage may be at most %d: narrow the range or the filters", maxFanoutLines),
			Details: map[string]any{"page": fmt.Sprintf("page × perPage must be at most %d", maxFanoutLines)}}
	}
	need := q.Page * q.PerPage
	servers, err := s.node.Servers()
	if err != nil {
		return logsAnswer{}, err
	}
	self := s.node.NodeID()
	parts := make([]memberPage, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		parts[i].id = srv.ID
		wg.Add(1)
		go func(mp *memberPage) {
			defer wg.Done()
			if mp.id == self {
				local := q
				local.Page, local.PerPage = 1, need
				mp.page, mp.err = s.logs.Query(local)
				return
			}
			mp.page, mp.err = s.memberLogs(r, mp.id, need, search)
		}(&parts[i])
	}
	wg.Wait()
	return mergeLogs(parts, q), nil
}

// memberLogs asks member id for its first need lines.
func (s *Server) memberLogs(r *http.Request, id string, need int, search *searchBody) (logfile.Page, error) {
	ctx, cancel := context.WithTimeout(r.Context(), peerLogsTimeout)
	defer cancel()
	addr := s.node.MemberHTTPAddr(ctx, id)
	if addr == "" {
		return logfile.Page{}, fmt.Errorf("its HTTP address is not known")
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	v := r.URL.Query()
	v.Del("node")
	method, body := http.MethodGet, []byte(nil)
	if search != nil {
		in := *search
		in.Page, in.Limit = 1, need
		body, _ = json.Marshal(in)
		method = http.MethodPost
	} else {
		v.Set("page", "1")
		v.Set("perPage", strconv.Itoa(need))
	}
	u := addr + r.URL.Path + "?" + v.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return logfile.Page{}, err
	}
	req.Header.Set(fanoutHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	} else if c, err := r.Cookie(adminCookie); err == nil {
		req.AddCookie(c)
	}
	res, err := s.peers.Do(req)
	if err != nil {
		return logfile.Page{}, fmt.Errorf("no answer: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return logfile.Page{}, fmt.Errorf("read answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return logfile.Page{}, fmt.Errorf("answered %d: %s", res.StatusCode, e.Error)
	}
	var out struct {
		Data logfile.Page `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return logfile.Page{}, fmt.Errorf("answer is not a page of lines: %w", err)
	}
	return out.Data, nil
}

// taggedLine is a gathered line with its time, for the merge.
type taggedLine struct {
	t    time.Time
	line json.RawMessage
}

// mergeLogs merges the members' lines newest first and cuts q's page.
func mergeLogs(parts []memberPage, q logfile.Query) logsAnswer {
	a := logsAnswer{Page: logfile.Page{Data: []json.RawMessage{}, Page: q.Page, PerPage: q.PerPage}, Nodes: []string{}}
	var all []taggedLine
	for _, mp := range parts {
		if mp.err != nil {
			a.Failed = append(a.Failed, failedNode{Node: mp.id, Error: mp.err.Error()})
			continue
		}
		a.Nodes = append(a.Nodes, mp.id)
		a.TotalItems += mp.page.TotalItems
		for _, l := range mp.page.Data {
			var h struct {
				Time time.Time `json:"time"`
			}
			_ = json.Unmarshal(l, &h)
			all = append(all, taggedLine{t: h.Time, line: tagNode(l, mp.id)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t.After(all[j].t) })
	for i := (q.Page - 1) * q.PerPage; i < len(all) && i < q.Page*q.PerPage; i++ {
		a.Data = append(a.Data, all[i].line)
	}
	a.TotalPages = (a.TotalItems + q.PerPage - 1) / q.PerPage
	return a
}

// tagNode sets a line's node when it has none.
func tagNode(line json.RawMessage, id string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	if _, ok := m["node"]; ok {
		return line
	}
	m["node"], _ = json.Marshal(id)
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return out
}
