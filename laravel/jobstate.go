package laravel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// JobGoneParams names the row JobGone looks for.
type JobGoneParams struct {
	ID int64 // the jobs row's id
}

// JobGone reports whether the jobs row is gone. A worker asks after a fenced completion that it sent
// before the connection broke and tried again once reconnected: when the second try finds the claim
// gone and the row gone with it, the first one committed (or another worker completed the row).
func (f *Fenced) JobGone(ctx context.Context, p JobGoneParams) (bool, error) {
	c := f.C
	var one int
	err := c.db.QueryRowxContext(ctx, c.d.rebind("select 1 from "+c.d.quote(c.tables.Jobs)+" where id = ?"), p.ID).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look up job %d: %w", p.ID, c.translate(err))
	}
	return false, nil
}
