package fsm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strings"
)

// Digest hashes every table of this replica: its schema and all its rows in
// a total order. Two replicas that applied the same log have equal digests;
// tests and the cluster admin view compare them.
func (s *Store) Digest(ctx context.Context) (map[string]string, error) {
	out, _, err := s.DigestAt(ctx)
	return out, err
}

// DigestAt is Digest with the applied index the hashed state reflects,
// read in the same transaction.
func (s *Store) DigestAt(ctx context.Context) (map[string]string, uint64, error) {
	out := map[string]string{}
	var applied uint64
	err := s.ViewTx(ctx, func(r *Reader) error {
		if err := r.QueryRow(`SELECT COALESCE((SELECT v FROM _svc_meta WHERE k = 'applied_index'), 0)`).Scan(&applied); err != nil {
			return err
		}
		rows, err := r.QueryDirect(`SELECT type, name, COALESCE(sql, '') FROM sqlite_schema
			WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
		if err != nil {
			return err
		}
		type obj struct{ typ, name, sql string }
		var objs []obj
		for rows.Next() {
			var o obj
			if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
				rows.Close()
				return err
			}
			objs = append(objs, o)
		}
		rows.Close()
		schema := sha256.New()
		for _, o := range objs {
			fmt.Fprintf(schema, "%s\x00%s\x00%s\x00", o.typ, o.name, o.sql)
			if o.typ != "table" || strings.HasPrefix(o.sql, "CREATE VIRTUAL") {
				continue
			}
			h, err := hashTable(r, o.name)
			if err != nil {
				return fmt.Errorf("digest %s: %w", o.name, err)
			}
			out["table:"+o.name] = h
		}
		out["schema"] = hex.EncodeToString(schema.Sum(nil))
		return nil
	})
	return out, applied, err
}

func hashTable(r *Reader, name string) (string, error) {
	q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	cols, err := r.QueryDirect(`SELECT * FROM ` + q + ` LIMIT 0`)
	if err != nil {
		return "", err
	}
	names, _ := cols.Columns()
	cols.Close()
	// Unary plus strips each column's declared type, so the driver hands
	// over the stored values instead of converting (dates, booleans).
	sel := make([]string, len(names))
	order := make([]string, len(names))
	for i, n := range names {
		sel[i] = `+"` + strings.ReplaceAll(n, `"`, `""`) + `"`
		order[i] = fmt.Sprint(i + 1)
	}
	rows, err := r.QueryDirect(`SELECT ` + strings.Join(sel, ", ") + ` FROM ` + q + ` ORDER BY ` + strings.Join(order, ", "))
	if err != nil {
		return "", err
	}
	defer rows.Close()
	h := sha256.New()
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		HashValues(h, vals)
	}
	return hex.EncodeToString(h.Sum(nil)), rows.Err()
}

// HashValues writes an unambiguous encoding of stored SQLite values (nil,
// int64, float64, string, []byte) to h: type tag, length where variable,
// bytes. Digests and entity tags share it.
func HashValues(h io.Writer, vals []any) {
	var buf [9]byte
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			h.Write([]byte{0})
		case int64:
			buf[0] = 1
			binary.BigEndian.PutUint64(buf[1:], uint64(x))
			h.Write(buf[:])
		case float64:
			buf[0] = 2
			binary.BigEndian.PutUint64(buf[1:], math.Float64bits(x))
			h.Write(buf[:])
		case string:
			buf[0] = 3
			binary.BigEndian.PutUint64(buf[1:], uint64(len(x)))
			h.Write(buf[:])
			io.WriteString(h, x)
		case []byte:
			buf[0] = 4
			binary.BigEndian.PutUint64(buf[1:], uint64(len(x)))
			h.Write(buf[:])
			h.Write(x)
		default:
			fmt.Fprintf(h, "%T:%v", x, x)
		}
	}
}
