package workflows

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Workflow is a workflow's definition as the admin API shows it.
type Workflow struct {
	Name    string `json:"name"`
	Code    string `json:"code"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
}

// List returns every workflow, by name.
func (m *Workflows) List(ctx context.Context) ([]Workflow, error) {
	out := []Workflow{}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT name, code, created, updated FROM _svc_workflows ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w Workflow
			if err := rows.Scan(&w.Name, &w.Code, &w.Created, &w.Updated); err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	return out, err
}

// Get returns workflow name.
func (m *Workflows) Get(ctx context.Context, name string) (*Workflow, error) {
	var w *Workflow
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		w, err = readWorkflow(r, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errNoWorkflow
	}
	return w, nil
}

// readWorkflow reads workflow name, or nil.
func readWorkflow(r *fsm.Reader, name string) (*Workflow, error) {
	var w Workflow
	err := r.QueryRow(`SELECT name, code, created, updated FROM _svc_workflows WHERE name = ?`, name).
		Scan(&w.Name, &w.Code, &w.Created, &w.Updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// Create stores a new workflow after its code compiled.
func (m *Workflows) Create(ctx context.Context, name, code string) (*Workflow, uint64, error) {
	if err := checkName(name); err != nil {
		return nil, 0, err
	}
	if err := m.checkCode(code); err != nil {
		return nil, 0, err
	}
	return m.define(ctx, defineCmd{Op: "create", Name: name, Code: code, Now: m.core.Now().Unix()})
}

// Update replaces the code of workflow name. Runs in progress execute
// the new code from their next advance on.
func (m *Workflows) Update(ctx context.Context, name, code string) (*Workflow, uint64, error) {
	if err := m.checkCode(code); err != nil {
		return nil, 0, err
	}
	return m.define(ctx, defineCmd{Op: "update", Name: name, Code: code, Now: m.core.Now().Unix()})
}

// Delete removes workflow name and every run of it, finished or not.
func (m *Workflows) Delete(ctx context.Context, name string) (uint64, error) {
	_, idx, err := m.core.Propose(ctx, cmdDefine, defineCmd{Op: "delete", Name: name, Now: m.core.Now().Unix()})
	return idx, err
}

// define proposes c and reads the workflow as committed.
func (m *Workflows) define(ctx context.Context, c defineCmd) (*Workflow, uint64, error) {
	_, idx, err := m.core.Propose(ctx, cmdDefine, c)
	if err != nil {
		return nil, idx, err
	}
	w, err := m.Get(ctx, c.Name)
	return w, idx, err
}

// checkCode refuses empty, oversized or uncompilable code with a 422
// naming the line and column.
func (m *Workflows) checkCode(code string) error {
	switch {
	case strings.TrimSpace(code) == "":
		return engine.FieldError("code", "is required")
	case len(code) > maxCode:
		return engine.FieldError("code", fmt.Sprintf("is longer than %d bytes", maxCode))
	}
	err := m.runner.Check(code)
	if err == nil {
		return nil
	}
	if e := engine.AsError(err); e != nil {
		return e
	}
	return &engine.Error{Kind: engine.KindValidation, Message: "The code does not compile: " + err.Error(),
		Details: map[string]any{"code": err.Error()}}
}

// applyDefine: a create refuses a taken name, an update and a delete a
// missing one; a delete takes the workflow's runs with it.
func (m *Workflows) applyDefine(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[defineCmd](cmd)
	if err != nil {
		return nil, err
	}
	var res driver.Result
	switch c.Op {
	case "create":
		res, err = tx.Exec(`INSERT INTO _svc_workflows (name, code, created, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, c.Name, c.Code, c.Now, c.Now)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil, engine.FirstErr(err, engine.FieldError("name", "a workflow with this name already exists"))
		}
		return nil, nil
	case "update":
		res, err = tx.Exec(`UPDATE _svc_workflows SET code = ?, updated = max(?, updated) WHERE name = ?`, c.Code, c.Now, c.Name)
	case "delete":
		for _, q := range []string{
			`DELETE FROM _svc_workflow_steps WHERE run_id IN (SELECT id FROM _svc_workflow_runs WHERE workflow = ?)`,
			`DELETE FROM _svc_workflow_deliveries WHERE run_id IN (SELECT id FROM _svc_workflow_runs WHERE workflow = ?)`,
			`DELETE FROM _svc_workflow_runs WHERE workflow = ?`,
		} {
			if _, err := tx.Exec(q, c.Name); err != nil {
				return nil, err
			}
		}
		res, err = tx.Exec(`DELETE FROM _svc_workflows WHERE name = ?`, c.Name)
	default:
		return nil, fmt.Errorf("%w: workflows.define: unknown op %q", fsm.ErrHalt, c.Op)
	}
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, engine.FirstErr(err, errNoWorkflow)
	}
	return nil, nil
}
