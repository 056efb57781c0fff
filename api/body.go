package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"svcd/engine"
)

// JSON request bodies (docs/configuration.md "Request bodies and
// timeouts"). A body is
// read whole before it is decoded, up to the runtime setting
// http.max_body_bytes (413 beyond it; CSV import and the realtime
// subscribe have their own limits). The bytes an anonymous caller's body
// takes while it is read are charged to the node's anonymous body budget
// (body_budget.go) until the request ends; how slowly any body may arrive
// is bodyRate's business (body_rate.go).

// Settings of the request body limits, and their floors.
const (
	maxBodySetting        = "http.max_body_bytes"
	anonBodyBudgetSetting = "http.anonymous_body_budget_bytes"
	defaultMaxBodyBytes   = 16 << 20
	minMaxBodyBytes       = 64 << 10
	defaultAnonBudget     = 64 << 20
)

// maxBodyBytes is the JSON body limit in force: the setting, never below
// its floor (so the settings route itself stays usable); the default when
// the stored value is not a number.
func (s *Server) maxBodyBytes() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s.settings.Setting(maxBodySetting)), 10, 64)
	if err != nil {
		return defaultMaxBodyBytes
	}
	return max(n, minMaxBodyBytes)
}

// anonBodyBudget is the anonymous body budget in force: 0 is none; a
// value that is not a number, or negative, is the default (a typo must
// not turn the budget off).
func (s *Server) anonBodyBudget() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s.settings.Setting(anonBodyBudgetSetting)), 10, 64)
	if err != nil || n < 0 {
		return defaultAnonBudget
	}
	return n
}

// tooLarge is the 413 of a body over limit bytes.
func tooLarge(limit int64) error {
	return engine.Errorf(engine.KindTooLarge, "Request body too large (limit %d bytes, setting %s)", limit, maxBodySetting)
}

// readBody reads a JSON request body up to the body limit. A declared
// length over the limit is refused before anything is read.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.maxBodyBytes()
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	var charge func(int64) error
	if principal(r).Kind == engine.Anonymous {
		if st := bodyStateOf(r); st != nil {
			charge = func(n int64) error { return st.charge(s.budget, s.anonBodyBudget(), n) }
		}
	}
	b, err := readAllCharged(http.MaxBytesReader(innermost(w), r.Body, limit), r.ContentLength, charge)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge(limit)
		case engine.AsError(err) != nil:
			return nil, err // too slow (408), over the anonymous budget (503)
		}
		return nil, engine.Errorf(engine.KindBadRequest, "Could not read the request body")
	}
	return b, nil
}

// decodeJSON reads a JSON object body into v.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return engine.Errorf(engine.KindBadRequest, "Invalid JSON body: %v", err)
	}
	return nil
}

// readAllCharged is io.ReadAll that accounts for its buffer: before it
// allocates a buffer it calls charge (when not nil) with its capacity, and
// stops with charge's error; once the old buffer is copied it gives the old
// capacity back (a negative charge). What is charged is therefore what
// the read holds, the copy included. The buffer grows as data arrives,
// never ahead of it: a declared length (size, -1 when unknown) only caps
// the growth, so a client cannot make the server allocate by announcing a
// large body and sending none.
func readAllCharged(r io.Reader, size int64, charge func(int64) error) ([]byte, error) {
	const first = 512
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			old := int64(cap(buf))
			next := max(2*old, first)
			if size >= 0 && next > size+1 {
				// Room for the declared length, and one byte more to
				// see the end (or an over-long body) without growing.
				next = max(size+1, old+1)
			}
			if charge != nil {
				if err := charge(next); err != nil {
					return nil, err
				}
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
			if charge != nil && old > 0 {
				_ = charge(-old)
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
