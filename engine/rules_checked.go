//go:build !svc_broken_rules

package engine

// brokenRuleCheck is false in every build but the one tagged
// svc_broken_rules (see rules_broken.go).
const brokenRuleCheck = false
