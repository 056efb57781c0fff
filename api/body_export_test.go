package api

// Hooks for the black-box body tests in package api_test.

// AnonymousBodyBytes is what the bodies of anonymous callers have charged
// to s's budget and not given back yet.
func AnonymousBodyBytes(s *Server) int64 { return s.budget.inUse() }
