package flags

import "encoding/json"

// Flag types (SPEC.md "Feature flag").
const (
	TypeBool   = "bool"
	TypeString = "string"
	TypeNumber = "number"
	TypeJSON   = "json"
)

// Flag is a feature flag as the admin routes show it (CONTRACT.md's
// shape, plus its timestamps). Values (default_value, variations) are
// canonical JSON: compact, object members sorted, numbers in their
// shortest form, so two equal values have equal bytes.
type Flag struct {
	Key string `json:"key"`
	flagDef
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
	// rev counts the flag's writes (a PATCH applies only to the revision
	// it was merged onto).
	rev int64
}

// flagDef is what a flag is, without its identity and timestamps: the
// stored definition (_svc_flags.def).
type flagDef struct {
	Type         string                     `json:"type"`
	DefaultValue json.RawMessage            `json:"default_value"`
	Variations   map[string]json.RawMessage `json:"variations"`
	Rules        []Rule                     `json:"rules"`
	Enabled      bool                       `json:"enabled"`
}

// Rule is one targeting rule: it serves Variation when When holds, the
// context falls into the Rollout and every prerequisite holds.
type Rule struct {
	ID            string         `json:"id"`
	When          *Condition     `json:"when,omitempty"`
	Rollout       *Rollout       `json:"rollout,omitempty"`
	Prerequisites []Prerequisite `json:"prerequisites,omitempty"`
	Variation     string         `json:"variation"`
}

// Rollout admits Value percent of the contexts, bucketed by the flag's
// key and the value of the Sticky attribute (rollout.go).
type Rollout struct {
	Value  float64 `json:"value"`
	Sticky string  `json:"sticky"`
}

// Prerequisite holds when flag Key, evaluated for the same context,
// serves the value of its variation Variation.
type Prerequisite struct {
	Key       string `json:"key"`
	Variation string `json:"variation"`
}

// Segment is a named condition that flag rules (and other segments)
// reference as {segment: name}.
type Segment struct {
	Name       string     `json:"name"`
	Conditions *Condition `json:"conditions"`
	Created    int64      `json:"created"`
	Updated    int64      `json:"updated"`
	rev        int64
}

// Reasons an evaluation gives (SPEC.md: rule_id and reason).
const (
	// ReasonRuleMatch: the rule RuleID matched and served its variation.
	ReasonRuleMatch = "rule_match"
	// ReasonNoMatch: no rule matched; the default value is served.
	ReasonNoMatch = "no_match"
	// ReasonDisabled: the flag is disabled; the default value is served.
	ReasonDisabled = "disabled"
)

// Result is one flag's evaluation as the admin evaluate route shows it.
// Variation and RuleID are null when the default value is served.
type Result struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Variation *string         `json:"variation"`
	RuleID    *string         `json:"rule_id"`
	Reason    string          `json:"reason"`
}
