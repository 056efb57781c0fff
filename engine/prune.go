package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"svcd/fsm"
)

// Retention (docs/operations.md "Retention"): what grows without end
// (webhook deliveries, finished jobs and workflow runs, the audit log,
// record history) is pruned by the leader. Each module registers a Pruner
// for its own tables; the core owns the one command that applies them all.
// The leader computes every cutoff from its clock and puts them in the
// command, so an apply never reads a clock.

// Pruner removes a module's rows older than a cutoff.
type Pruner struct {
	// Name names what is pruned ("webhook_deliveries", ...): the key of
	// the cutoff in the command and of the count in the result.
	Name string
	// Setting is the retention setting the module defines (for the
	// listing); Cutoff reads it: the unix second before which rows go at
	// now, 0 to keep everything. Called on the leader, never in an apply.
	Setting string
	Cutoff  func(now time.Time) int64
	// Prune deletes at most limit rows older than cutoff (unix seconds)
	// and says how many it deleted.
	Prune func(tx *fsm.Tx, cutoff int64, limit int) (int64, error)
}

// PruneStatement is a Pruner's Prune for the common case: stmt is one
// DELETE taking the cutoff (unix seconds) and the limit as its two
// parameters, in that order.
func PruneStatement(stmt string) func(tx *fsm.Tx, cutoff int64, limit int) (int64, error) {
	return func(tx *fsm.Tx, cutoff int64, limit int) (int64, error) {
		res, err := tx.Exec(stmt, cutoff, limit)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
}

// OnPrune registers p (the registry DESIGN.md lists).
func (e *Engine) OnPrune(p Pruner) {
	e.reg.mustOpen("pruner " + p.Name)
	e.reg.pruners = append(e.reg.pruners, p)
}

// cmdPrune applies every pruner once, within a bound of rows.
const cmdPrune fsm.Type = 150

// PruneChunk is the most rows one prune command deletes, over all its
// pruners: a large backlog is emptied by several commands, never one
// giant apply.
const PruneChunk = 500

// pruneCmd is the command: the cutoffs of the pruners that are on.
type pruneCmd struct {
	Cutoffs map[string]int64 `json:"cutoffs"`
	Limit   int              `json:"limit"`
}

// PruneResult is what one prune command (or a whole run) deleted, by
// pruner name; More says a chunk was full and a next command may find more.
type PruneResult struct {
	Pruned map[string]int64 `json:"pruned"`
	More   bool             `json:"more,omitempty"`
}

func (e *Engine) registerPrune() {
	RegisterResult[PruneResult](e, "prune")
	e.Command(cmdPrune, "retention.prune", e.applyPrune)
	e.DefineSettings(SettingDef{Key: SettingRetentionInterval, Default: "3600", Validate: func(v string) string {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 60 {
			return "must be a whole number of seconds, 60 or more"
		}
		return ""
	}})
}

// SettingRetentionInterval is how often the leader prunes, in seconds.
const SettingRetentionInterval = "retention.interval_seconds"

// ValidateDays is the check of a retention setting in days: a whole
// number, 0 (keep forever) or more.
func ValidateDays(v string) string {
	if _, ok := parseDays(v); !ok {
		return "must be a whole number of days from 0 (keep forever) to 36500"
	}
	return ""
}

func parseDays(v string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil && n >= 0 && n <= 36500
}

// DaysCutoff is the cutoff of a retention setting in days at now: 0
// (keep forever) when it is 0 or malformed.
func (e *Engine) DaysCutoff(key string, now time.Time) int64 {
	n, ok := parseDays(e.Setting(key))
	if !ok || n == 0 {
		return 0
	}
	return now.Add(-time.Duration(n) * 24 * time.Hour).Unix()
}

// applyPrune runs the pruners in registration order (the same on every
// node) while the chunk has room.
func (e *Engine) applyPrune(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[pruneCmd](cmd)
	if err != nil {
		return nil, err
	}
	limit := c.Limit
	if limit <= 0 || limit > PruneChunk {
		limit = PruneChunk
	}
	// A cutoff for a pruner this binary lacks comes from a newer leader
	// (a rolling upgrade): skipping it would leave this node's tables
	// different from the others', so the node stops at the entry and
	// goes on once upgraded (docs/operations.md, Rolling upgrades).
	for name := range c.Cutoffs {
		if !slices.ContainsFunc(e.reg.pruners, func(p Pruner) bool { return p.Name == name }) {
			return nil, fmt.Errorf("%w: retention: the leader prunes %q, which this binary does not know", fsm.ErrHalt, name)
		}
	}
	res := &PruneResult{Pruned: map[string]int64{}}
	left := int64(limit)
	for _, p := range e.reg.pruners {
		cutoff, ok := c.Cutoffs[p.Name]
		if !ok || cutoff <= 0 {
			continue
		}
		if left == 0 {
			res.More = true
			break
		}
		n, err := p.Prune(tx, cutoff, int(left))
		if err != nil {
			return nil, err
		}
		res.Pruned[p.Name] = n
		left -= n
		if left == 0 {
			res.More = true
		}
	}
	return res, nil
}

// PruneCutoffs are the cutoffs at now of the pruners that are on.
func (e *Engine) PruneCutoffs(now time.Time) map[string]int64 {
	out := map[string]int64{}
	for _, p := range e.reg.pruners {
		if c := p.Cutoff(now); c > 0 {
			out[p.Name] = c
		}
	}
	return out
}

// RetentionPolicy is one pruner and its setting's current value.
type RetentionPolicy struct {
	Name    string `json:"name"`
	Setting string `json:"setting"`
	Value   string `json:"value"`
}

// RetentionPolicies lists the pruners and their settings.
func (e *Engine) RetentionPolicies() []RetentionPolicy {
	out := make([]RetentionPolicy, 0, len(e.reg.pruners))
	for _, p := range e.reg.pruners {
		out = append(out, RetentionPolicy{Name: p.Name, Setting: p.Setting, Value: e.Setting(p.Setting)})
	}
	return out
}

// maxPruneCommands bounds one run: a backlog beyond it waits for the next.
const maxPruneCommands = 1000

// Prune runs retention now (the leader's clock), one chunk per command
// until nothing is left, and sums what was deleted. Only a leader (or a
// follower forwarding) calls it; each command goes through the log.
func (e *Engine) Prune(ctx context.Context, limit int) (*PruneResult, uint64, error) {
	total := &PruneResult{Pruned: map[string]int64{}}
	cutoffs := e.PruneCutoffs(e.now())
	for name := range cutoffs {
		total.Pruned[name] = 0
	}
	if len(cutoffs) == 0 || e.InternalVersion() < e.SchemaVersion() {
		return total, 0, nil
	}
	var idx uint64
	for range maxPruneCommands {
		v, i, err := e.Propose(ctx, cmdPrune, pruneCmd{Cutoffs: cutoffs, Limit: limit})
		if err != nil {
			return total, idx, err
		}
		idx = i
		r, _ := v.(*PruneResult)
		if r == nil {
			break
		}
		for k, n := range r.Pruned {
			total.Pruned[k] += n
		}
		if !r.More {
			break
		}
	}
	return total, idx, nil
}

// RetentionInterval is retention.interval_seconds (at least a minute).
func (e *Engine) RetentionInterval() time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(e.Setting(SettingRetentionInterval)))
	if err != nil || n < 60 {
		n = 3600
	}
	return time.Duration(n) * time.Second
}
