package notify

import (
	"context"
	"database/sql"
	"errors"
	"sort"

	"svcd/engine"
	"svcd/fsm"
)

type disableDeadCmd struct {
	Coll     string   `json:"coll"`
	Ver      int64    `json:"ver"`
	Provider string   `json:"provider"`
	Tokens   []string `json:"tokens"`
	Now      int64    `json:"now"`
}

// disableDead disables the enabled tokens of provider that the provider
// reported dead. The change is the system's (no actor).
func (n *Notifications) disableDead(ctx context.Context, provider string, tokens []string) error {
	if len(tokens) == 0 {
		return nil
	}
	tokens = append([]string(nil), tokens...)
	sort.Strings(tokens)
	for attempt := 0; ; attempt++ {
		ci := n.core.Coll(DevicesCollection)
		if ci == nil {
			return nil // the collection is gone: nothing to disable
		}
		_, _, err := n.core.Propose(ctx, cmdDisableDead, disableDeadCmd{Coll: ci.ID, Ver: ci.Version, Provider: provider,
			Tokens: tokens, Now: n.core.Now().Unix()})
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if errors.Is(err, engine.ErrNotFound) {
			return nil
		}
		return err
	}
}

func (n *Notifications) applyDisableDead(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[disableDeadCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := n.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	for _, tok := range c.Tokens {
		var id string
		err := tx.QueryRow(`SELECT id FROM `+ci.Table()+` WHERE token = ? AND provider = ? AND enabled = 1`, tok, c.Provider).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			continue // gone, rebound to another provider, or disabled already
		}
		if err != nil {
			return nil, err
		}
		if err := n.disableRow(tx, ci, id, c.Now, nil); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
