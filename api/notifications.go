package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/notify"
)

// Notifications is what the notification routes need (engine/notify).
type Notifications interface {
	RegisterDevice(ctx context.Context, p engine.Principal, body []byte) (*engine.Record, bool, uint64, error)
	UnregisterDevice(ctx context.Context, p engine.Principal, token string) (uint64, error)
	Providers(ctx context.Context, reveal bool) (*notify.Overview, error)
	PatchProvider(ctx context.Context, name string, body []byte) (*notify.ProviderStatus, uint64, error)
	TestConnection(ctx context.Context, name string) (*notify.Probe, error)
	TestSend(ctx context.Context, body []byte) (*notify.TestResult, error)
}

// The device routes, for signed-in users (docs/notifications.md); both
// answer 503 until a push provider has been enabled:
//
//	POST   /notifications/devices          {token, provider, platform, app_version?}: 201 new, 200 rebound
//	DELETE /notifications/devices/{token}  disable the caller's device (204)
func (s *Server) mountNotificationDevices(r chi.Router) {
	r.Post("/notifications/devices", s.registerDevice)
	r.Delete("/notifications/devices/{token}", s.unregisterDevice)
}

// The provider routes (read: developer; write and reveal: owner):
//
//	GET   /admin/notifications/providers                         every provider, secrets masked unless ?reveal=1
//	PATCH /admin/notifications/providers/{name}                  change its settings; enabling checks them and creates the collections
//	POST  /admin/notifications/providers/{name}/test-connection  probe: {provider, ok, error?}
//	POST  /admin/notifications/test                              {userId, title?, body?, data?, providers?}: a real push now
func (s *Server) mountNotifications(r chi.Router) {
	r.Get("/admin/notifications/providers", s.listPushProviders)
	r.Patch("/admin/notifications/providers/{name}", s.patchPushProvider)
	r.Post("/admin/notifications/providers/{name}/test-connection", s.testPushConnection)
	r.Post("/admin/notifications/test", s.testPush)
}

func (s *Server) registerDevice(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, created, idx, err := s.notify.RegisterDevice(r.Context(), principal(r), b)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeRawData(w, status, rec.JSON)
}

func (s *Server) unregisterDevice(w http.ResponseWriter, r *http.Request) {
	token, err := url.PathUnescape(chi.URLParam(r, "token"))
	if err != nil {
		s.writeError(w, r, engine.Errorf(engine.KindBadRequest, "The token is not a valid path segment"))
		return
	}
	idx, err := s.notify.UnregisterDevice(r.Context(), principal(r), token)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listPushProviders answers the providers; revealing secrets takes the
// owner role, as for settings.
func (s *Server) listPushProviders(w http.ResponseWriter, r *http.Request) {
	reveal := r.URL.Query().Get("reveal") == "1"
	if reveal && principal(r).Role < engine.RoleOwner {
		s.writeError(w, r, errRoleTooLow)
		return
	}
	out, err := s.notify.Providers(r.Context(), reveal)
	s.answer(w, r, http.StatusOK, out, 0, err)
}

func (s *Server) patchPushProvider(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, idx, err := s.notify.PatchProvider(r.Context(), chi.URLParam(r, "name"), b)
	s.answer(w, r, http.StatusOK, st, idx, err)
}

func (s *Server) testPushConnection(w http.ResponseWriter, r *http.Request) {
	out, err := s.notify.TestConnection(r.Context(), chi.URLParam(r, "name"))
	s.answer(w, r, http.StatusOK, out, 0, err)
}

func (s *Server) testPush(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.notify.TestSend(r.Context(), b)
	s.answer(w, r, http.StatusOK, out, 0, err)
}
