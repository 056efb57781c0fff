package files

import (
	"context"

	"svcd/fsm"
)

// LocalFiles calls fn with the stored name and SHA-256 of every file kept
// by the local driver, in name order: what a node's copy of the local
// store must hold (the cluster's background copy walks it to fetch what
// this node lacks). fn runs inside a read of the replica: keep it short.
func (m *Files) LocalFiles(ctx context.Context, fn func(name, sha256 string) error) error {
	return m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT name, sha256 FROM _svc_files WHERE driver = 'local' ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, sum string
			if err := rows.Scan(&name, &sum); err != nil {
				return err
			}
			if err := fn(name, sum); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}
