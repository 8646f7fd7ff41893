package laravel

import (
	"context"
	"fmt"
	"strings"
)

// ModelKeysParams names the rows ModelKeys looks for: a model's table, its key column and the keys a
// SerializesModels job carries.
type ModelKeysParams struct {
	Table string
	Key   string // the key column; "" is id
	IDs   []any  // int64 or string keys
}

// ModelKeys returns which of the keys exist in the model's table, as strings ("7", "a1b2"), as
// Eloquent's newQueryForRestoration finds them when PHP unserializes a job. A table that does not exist
// is a *MissingTableError.
func (c *Conn) ModelKeys(ctx context.Context, p *ModelKeysParams) (map[string]bool, error) {
	found := map[string]bool{}
	if len(p.IDs) == 0 {
		return found, nil
	}
	key := p.Key
	if key == "" {
		key = "id"
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(p.IDs)), ", ")
	q := c.d.rebind("select " + c.d.quote(key) + " from " + c.d.quote(p.Table) + " where " + c.d.quote(key) + " in (" + marks + ")")
	rows, err := c.db.QueryContext(ctx, q, p.IDs...)
	if err != nil {
		return nil, fmt.Errorf("read %s keys: %w", p.Table, c.translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var k any
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("read %s keys: %w", p.Table, err)
		}
		if b, ok := k.([]byte); ok {
			k = string(b)
		}
		found[fmt.Sprint(k)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s keys: %w", p.Table, c.translate(err))
	}
	return found, nil
}
