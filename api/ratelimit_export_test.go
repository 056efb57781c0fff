package api

import "time"

// Hooks for the black-box rate-limit tests in package api_test.

// SetRateClock makes the rate limiter of s read time from now.
func SetRateClock(s *Server, now func() time.Time) { s.rate.now = now }

// RateLimited counts the requests s answered 429.
func RateLimited(s *Server) uint64 { return s.rate.limited.Load() }
