//go:build svc_broken_rules

package engine

// brokenRuleCheck is set in the test build tagged svc_broken_rules only: the
// engine then ignores every rule, which the authorization matrix test
// (api/authz_matrix_test.go) must catch. Release builds never carry it.
const brokenRuleCheck = true
