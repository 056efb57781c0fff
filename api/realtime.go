package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/realtime"
)

// Realtime limits of one connection.
const (
	// realtimeMaxMessage bounds a client message (WebSocket frame or SSE
	// subscribe body): larger ones are answered too_large.
	realtimeMaxMessage = 16 << 10
	// realtimeHardLimit closes a WebSocket whose frame exceeds it without
	// reading it all.
	realtimeHardLimit = 1 << 20
)

// mountRealtime serves the WebSocket at /realtime (outside /api/v1).
//
//	GET /realtime   WebSocket
func (s *Server) mountRealtime(r chi.Router) {
	if s.rt == nil {
		return
	}
	r.With(s.realtimeMark, s.authenticate).Get("/realtime", s.realtimeWS)
}

// mountRealtimeSSE serves the SSE endpoints under /api/v1.
//
//	GET    /realtime                     open a stream
//	POST   /realtime                     set a client's subscriptions
//	DELETE /realtime/{clientId}          disconnect
//	GET    /realtime/presence/{channel}  the channel's presences
func (s *Server) mountRealtimeSSE(r chi.Router) {
	if s.rt == nil {
		return
	}
	r.Group(func(r chi.Router) {
		r.Use(s.realtimeMark, s.authenticate)
		r.Get("/realtime", s.untilDrain(s.realtimeSSE))
		r.Post("/realtime", s.realtimeSSESubscribe)
		r.Delete("/realtime/{clientId}", s.realtimeSSEDisconnect)
		r.Get("/realtime/presence/{channel}", s.realtimePresence)
	})
}

// realtimeCredential is the principal a realtime client opens with: the
// request's credential, with what rules may read of the opening request.
// The hub rechecks it whenever a committed change may have ended or
// changed it; realtimeReader decides what it reads records as.
func realtimeCredential(r *http.Request) engine.Principal {
	p := principal(r)
	p.Request = requestInfo(r)
	return p
}

// realtimeReader is what principal p reads records as, as on the record
// routes: an admin whose role is below editor reads as anonymous. The hub
// applies it again to every principal a recheck returns (an admin demoted
// to viewer reads as anonymous from the next event on).
func realtimeReader(p engine.Principal) engine.Principal {
	if p.IsAdmin() && p.Role < requiredRole(http.MethodGet, recordsScope) {
		return engine.Principal{Request: p.Request}
	}
	return p
}

type realtimeMarkKey struct{}

// realtimeMark notes the hub's credential mark before authenticate runs:
// the credential events the hub observes from then on are checked against
// the principal the request authenticates as.
func (s *Server) realtimeMark(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), realtimeMarkKey{}, s.rt.AuthMark())))
	})
}

// realtimeMarkOf is the mark realtimeMark noted (zero: none, the hub then
// rechecks the principal before its first event).
func realtimeMarkOf(r *http.Request) realtime.AuthMark {
	m, _ := r.Context().Value(realtimeMarkKey{}).(realtime.AuthMark)
	return m
}

// realtimeOriginAllowed: a request without Origin (not a browser) or from
// the server's own host passes; others must be listed in cors.origins
// (or it holds "*").
func (s *Server) realtimeOriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, o := range strings.Split(s.settings.Setting("cors.origins"), ",") {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if o == "*" || (o != "" && strings.EqualFold(o, origin)) {
			return true
		}
	}
	return false
}

var (
	errRealtimeOrigin   = engine.Errorf(engine.KindForbidden, "Origin not allowed (cors.origins)")
	errRealtimeClient   = engine.Errorf(engine.KindNotFound, "Unknown or closed realtime client")
	errRealtimeIdentity = engine.Errorf(engine.KindForbidden, "The client was opened by another identity")
)

// sameIdentity: a subscribe POST may come from the stream's own identity,
// or authenticate a stream opened anonymously.
func sameIdentity(stream, post engine.Principal) bool {
	return stream.Kind == engine.Anonymous || (stream.Kind == post.Kind && stream.ID == post.ID)
}

// realtimePresence serves GET /api/v1/realtime/presence/{channel}: data
// is the channel's presences across the cluster, key -> metas. Like the
// realtime streams, it is open to any caller that passes cors.origins.
func (s *Server) realtimePresence(w http.ResponseWriter, r *http.Request) {
	if !s.realtimeOriginAllowed(r) {
		s.writeError(w, r, errRealtimeOrigin)
		return
	}
	channel := chi.URLParam(r, "channel")
	if u, err := url.PathUnescape(channel); err == nil {
		channel = u
	}
	if e := realtime.CheckChannel(channel); e != nil {
		s.writeError(w, r, &engine.Error{Kind: engine.KindValidation, Message: "Validation failed", Details: map[string]any{"channel": e.Message}})
		return
	}
	writeData(w, http.StatusOK, s.rt.Presence().State(channel))
}

// realtimeStats adds the hub's figures to the metrics snapshot.
func (s *Server) realtimeStats(out map[string]any) {
	if s.rt == nil {
		return
	}
	st := s.rt.Stats()
	out["realtime_connections"] = st.Connections
	out["realtime_subscriptions"] = st.Subscriptions
	out["realtime_dropped_consumers"] = st.Dropped
	out["realtime_ring_events"] = st.RingEvents
	ps := s.rt.Presence().Stats()
	out["realtime_presences_local"] = ps.Local
	out["realtime_presences_remote"] = ps.Remote
	out["realtime_presence_channels"] = ps.Channels
}

// rtError is the error message of a realtime protocol error.
func rtError(code, msg string) realtime.Message {
	return realtime.ErrorMessage(&realtime.Error{Code: code, Message: msg})
}
