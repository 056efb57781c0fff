package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/flags"
)

// Flags is what the flag routes need (engine/flags).
type Flags interface {
	ListFlags(ctx context.Context) ([]*flags.Flag, error)
	Flag(ctx context.Context, key string) (*flags.Flag, error)
	PutFlag(ctx context.Context, body []byte) (*flags.Flag, bool, uint64, error)
	PatchFlag(ctx context.Context, key string, patch []byte) (*flags.Flag, uint64, error)
	DeleteFlag(ctx context.Context, key string) (uint64, error)
	EvaluateFlag(ctx context.Context, key string, attrs map[string]any) (*flags.Result, error)
	EvaluateJSON(ctx context.Context, attrs map[string]any, keys []string) (map[string]json.RawMessage, error)
}

// Feature flag routes (developer role, docs/flags.md):
//
//	GET    /admin/flags                 every flag, by key
//	POST   /admin/flags                 create (201), or replace the flag with that key (200)
//	GET    /admin/flags/{key}           one flag
//	PATCH  /admin/flags/{key}           change some members
//	DELETE /admin/flags/{key}           delete (409 while another flag needs it)
//	POST   /admin/flags/{key}/evaluate  {context} -> value, variation, rule_id, reason
func (s *Server) mountFlags(r chi.Router) {
	r.Get("/admin/flags", s.listFlags)
	r.Post("/admin/flags", s.putFlag)
	r.Get("/admin/flags/{key}", s.getFlag)
	r.Patch("/admin/flags/{key}", s.patchFlag)
	r.Delete("/admin/flags/{key}", s.deleteFlag)
	r.Post("/admin/flags/{key}/evaluate", s.explainFlag)
}

// The public evaluate route, open to anyone (the caller supplies the
// context; the answer holds values only, never rules):
//
//	POST /flags/evaluate  {context, keys?} -> {key: value}
func (s *Server) mountFlagsPublic(r chi.Router) {
	r.Post("/flags/evaluate", s.evaluateFlags)
}

// flagsEvaluatePath is the public evaluate route's path: a read for the
// rate limiter (ratelimit_rules.go), though a POST.
const flagsEvaluatePath = "/api/v1/flags/evaluate"

func (s *Server) listFlags(w http.ResponseWriter, r *http.Request) {
	l, err := s.flags.ListFlags(r.Context())
	s.answer(w, r, http.StatusOK, l, 0, err)
}

func (s *Server) getFlag(w http.ResponseWriter, r *http.Request) {
	v, err := s.flags.Flag(r.Context(), chi.URLParam(r, "key"))
	s.answer(w, r, http.StatusOK, v, 0, err)
}

func (s *Server) putFlag(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, created, idx, err := s.flags.PutFlag(r.Context(), b)
	s.answer(w, r, createdOr(created), v, idx, err)
}

func (s *Server) patchFlag(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, idx, err := s.flags.PatchFlag(r.Context(), chi.URLParam(r, "key"), b)
	s.answer(w, r, http.StatusOK, v, idx, err)
}

func (s *Server) deleteFlag(w http.ResponseWriter, r *http.Request) {
	idx, err := s.flags.DeleteFlag(r.Context(), chi.URLParam(r, "key"))
	s.answer(w, r, http.StatusNoContent, nil, idx, err)
}

// explainFlag answers the admin evaluate: {key, value, variation,
// rule_id, reason}.
func (s *Server) explainFlag(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	attrs, _, err := evalRequest(b, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.flags.EvaluateFlag(r.Context(), chi.URLParam(r, "key"), attrs)
	s.answer(w, r, http.StatusOK, res, 0, err)
}

// evaluateFlags answers the public evaluate: {data: {key: value}} for
// the keys asked (every flag without keys); unknown keys are left out.
func (s *Server) evaluateFlags(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	attrs, keys, err := evalRequest(b, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.flags.EvaluateJSON(r.Context(), attrs, keys)
	s.answer(w, r, http.StatusOK, out, 0, err)
}

// evalRequest reads an evaluate body: {context?, keys?} (keys only when
// withKeys). An empty body is an empty context.
func evalRequest(b []byte, withKeys bool) (map[string]any, []string, error) {
	attrs := map[string]any{}
	if len(b) == 0 {
		return attrs, nil, nil
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(b, &in); err != nil || in == nil {
		return nil, nil, engine.Errorf(engine.KindBadRequest, "The body must be a JSON object: {context, keys?}")
	}
	bad := map[string]string{}
	var keys []string
	for k, v := range in {
		switch {
		case k == "context":
			if string(v) != "null" && (json.Unmarshal(v, &attrs) != nil || attrs == nil) {
				bad[k] = "must be an object of attribute names to values"
			}
		case k == "keys" && withKeys:
			if string(v) != "null" && json.Unmarshal(v, &keys) != nil {
				bad[k] = "must be an array of flag keys"
			}
		default:
			bad[k] = "unknown member"
		}
	}
	if len(bad) > 0 {
		return nil, nil, engine.ValidationError(bad)
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	return attrs, keys, nil
}
