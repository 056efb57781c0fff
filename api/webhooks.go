package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/webhooks"
)

// Webhooks is what the webhook routes need (engine/webhooks).
type Webhooks interface {
	List(ctx context.Context, reveal bool) ([]*webhooks.Webhook, error)
	Get(ctx context.Context, id string, reveal bool) (*webhooks.Webhook, error)
	Create(ctx context.Context, body []byte) (*webhooks.Webhook, uint64, error)
	Update(ctx context.Context, id string, body []byte) (*webhooks.Webhook, uint64, error)
	Delete(ctx context.Context, id string) (uint64, error)
	Test(ctx context.Context, id string) (*webhooks.Delivery, uint64, error)
	Deliveries(ctx context.Context, id string, limit int, since int64) ([]*webhooks.Delivery, error)
}

// mountWebhooks serves SPEC.md's webhook routes (developer role), and
// GET of one webhook. Secrets are masked unless ?reveal=1; the answer to
// a create shows the secret.
func (s *Server) mountWebhooks(r chi.Router) {
	r.Get("/admin/webhooks", s.listWebhooks)
	r.Post("/admin/webhooks", s.createWebhook)
	r.Get("/admin/webhooks/{id}", s.getWebhook)
	r.Patch("/admin/webhooks/{id}", s.updateWebhook)
	r.Delete("/admin/webhooks/{id}", s.deleteWebhook)
	r.Post("/admin/webhooks/{id}/test", s.testWebhook)
	r.Get("/admin/webhooks/{id}/deliveries", s.webhookDeliveries)
}

func reveal(r *http.Request) bool { return r.URL.Query().Get("reveal") == "1" }

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	list, err := s.webhooks.List(r.Context(), reveal(r))
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	wh, err := s.webhooks.Get(r.Context(), chi.URLParam(r, "id"), reveal(r))
	s.answer(w, r, http.StatusOK, wh, 0, err)
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	wh, idx, err := s.webhooks.Create(r.Context(), body)
	s.answer(w, r, http.StatusCreated, wh, idx, err)
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	wh, idx, err := s.webhooks.Update(r.Context(), chi.URLParam(r, "id"), body)
	s.answer(w, r, http.StatusOK, wh, idx, err)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	idx, err := s.webhooks.Delete(r.Context(), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// testWebhook queues a synthetic delivery and answers it as it stands
// after its first attempt.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) {
	d, idx, err := s.webhooks.Test(r.Context(), chi.URLParam(r, "id"))
	s.answer(w, r, http.StatusOK, d, idx, err)
}

// webhookDeliveries answers the newest deliveries (?limit=, default 50,
// at most 500), those created at or after ?since= (unix seconds) only.
func (s *Server) webhookDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := map[string]string{}
	limit, since := 0, int64(0)
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			d["limit"] = "must be a positive integer"
		}
		limit = n
	}
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			d["since"] = "must be unix seconds"
		}
		since = n
	}
	if len(d) > 0 {
		s.writeError(w, r, engine.ValidationError(d))
		return
	}
	list, err := s.webhooks.Deliveries(r.Context(), chi.URLParam(r, "id"), limit, since)
	s.answer(w, r, http.StatusOK, list, 0, err)
}
