package auth

import (
	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// registerOAuth2Hooks removes an account's links and merge tokens with
// the account, and a collection's OAuth2 state with the collection.
func (o *OAuth2) registerOAuth2Hooks() {
	o.au.core.OnRecordWrite(engine.RecordHook{Name: "oauth2", Apply: func(tx *fsm.Tx, w *engine.RecordWrite) error {
		if w.Kind != engine.EvRecordDelete || w.Coll.Type != schema.TypeAuth {
			return nil
		}
		return dropOAuth2State(tx, w.Coll.ID, engine.AsString(w.Row[0]))
	}})
	o.au.core.OnCollectionChange(engine.CollectionHook{Name: "oauth2", Apply: func(tx *fsm.Tx, c engine.CollectionChange) error {
		if c.New != nil || c.Old.Type != schema.TypeAuth {
			return nil
		}
		return dropOAuth2State(tx, c.Old.ID, "")
	}})
}

// dropOAuth2State deletes the links and merge tokens of user id of
// collection coll (of every user when id is ""), and with the collection
// its pending authorizations.
func dropOAuth2State(tx *fsm.Tx, coll, id string) error {
	if v, err := engine.InternalVersionTx(tx); err != nil || v < oauth2SchemaVersion {
		return err
	}
	for _, t := range []string{"_svc_oauth2_links", "_svc_oauth2_merges"} {
		q, args := "DELETE FROM "+t+" WHERE coll = ?", []any{coll}
		if id != "" {
			q, args = q+" AND user_id = ?", append(args, id)
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return err
		}
	}
	if id == "" {
		_, err := tx.Exec(`DELETE FROM _svc_oauth2_states WHERE coll = ?`, coll)
		return err
	}
	return nil
}
