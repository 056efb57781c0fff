package jsvm

import (
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused.
const (
	cmdHookSave    fsm.Type = 86
	cmdHookDelete  fsm.Type = 87
	cmdRouteSave   fsm.Type = 88
	cmdRouteDelete fsm.Type = 89
)

// Events the applies emit: the caches reload on them.
const (
	evHooks  = "jsvm.hooks"
	evRoutes = "jsvm.routes"
)

func (m *Module) registerCommands() {
	m.core.Command(cmdHookSave, "jsvm.hook_save", m.applyHookSave)
	m.core.Command(cmdHookDelete, "jsvm.hook_delete", m.applyHookDelete)
	m.core.Command(cmdRouteSave, "jsvm.route_save", m.applyRouteSave)
	m.core.Command(cmdRouteDelete, "jsvm.route_delete", m.applyRouteDelete)
}

// hookSaveCmd creates a hook, or replaces an existing one's members
// (its created time stays).
type hookSaveCmd struct {
	Hook   Hook `json:"hook"`
	Create bool `json:"create,omitempty"`
}

// routeSaveCmd is hookSaveCmd for a route, with its pattern.
type routeSaveCmd struct {
	Route   Route  `json:"route"`
	Pattern string `json:"pattern"`
	Create  bool   `json:"create,omitempty"`
}

type deleteCmd struct {
	ID string `json:"id"`
}

func (m *Module) applyHookSave(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[hookSaveCmd](cmd)
	if err != nil {
		return nil, err
	}
	h := c.Hook
	var res sql.Result
	if c.Create {
		res, err = tx.Exec(`INSERT INTO _svc_hooks (id, collection, event, code, enabled, ord, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, h.ID, h.Collection, h.Event, h.Code, h.Enabled, h.Order, h.Created, h.Updated)
	} else {
		res, err = tx.Exec(`UPDATE _svc_hooks SET collection = ?, event = ?, code = ?, enabled = ?, ord = ?, updated = ?
			WHERE id = ?`, h.Collection, h.Event, h.Code, h.Enabled, h.Order, h.Updated, h.ID)
	}
	if err := changedOne(res, err, errHookNotFound); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evHooks, Subject: h.ID})
	return nil, nil
}

func (m *Module) applyHookDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`DELETE FROM _svc_hooks WHERE id = ?`, c.ID)
	if err := changedOne(res, err, errHookNotFound); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evHooks, Subject: c.ID})
	return nil, nil
}

// applyRouteSave refuses a route whose method and pattern another route
// has (409), decided here so that two racing saves cannot both win.
func (m *Module) applyRouteSave(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[routeSaveCmd](cmd)
	if err != nil {
		return nil, err
	}
	r := c.Route
	var other string
	err = tx.QueryRow(`SELECT id FROM _svc_routes WHERE method = ? AND pattern = ? AND id != ?`, r.Method, c.Pattern, r.ID).Scan(&other)
	switch {
	case err == nil:
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "Another route serves this method and path",
			Details: map[string]any{"path": "route " + other + " already serves " + r.Method + " " + r.Path}}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	var res sql.Result
	if c.Create {
		res, err = tx.Exec(`INSERT INTO _svc_routes (id, method, path, pattern, code, enabled, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Method, r.Path, c.Pattern, r.Code, r.Enabled, r.Created, r.Updated)
	} else {
		res, err = tx.Exec(`UPDATE _svc_routes SET method = ?, path = ?, pattern = ?, code = ?, enabled = ?, updated = ?
			WHERE id = ?`, r.Method, r.Path, c.Pattern, r.Code, r.Enabled, r.Updated, r.ID)
	}
	if err := changedOne(res, err, errRouteNotFound); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evRoutes, Subject: r.ID})
	return nil, nil
}

func (m *Module) applyRouteDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`DELETE FROM _svc_routes WHERE id = ?`, c.ID)
	if err := changedOne(res, err, errRouteNotFound); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evRoutes, Subject: c.ID})
	return nil, nil
}

// changedOne is err, or missing when the statement changed no row (the
// row was deleted since the proposer saw it).
func changedOne(res sql.Result, err error, missing error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return missing
	}
	return nil
}
