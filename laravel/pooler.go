package laravel

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// poolerCheck remembers whether a Conn's connections reach server sessions of their own, once known.
type poolerCheck struct {
	mu     sync.Mutex
	known  bool
	pooled bool
}

// TransactionPooled reports whether the server session behind one of this Conn's connections changes
// between transactions, as behind PgBouncer's transaction or statement pooling (or a proxy that
// multiplexes MySQL sessions): what a session holds (an advisory lock, GET_LOCK, a SET) then stays
// on a server connection that other clients go on using. It is asked once and remembered; false
// where the dialect has no session id (SQLite) or the pool allows one connection.
//
// It compares session ids: two statements outside transactions on one connection, and between them
// a transaction on a second connection. Connected directly, the first connection's two ids are equal
// and the second's differs. A transaction pooler hands the second connection a server connection
// the first has just given back (PgBouncer reuses its most recently freed one), or gives the first
// another one for its second statement: either shows.
func (c *Conn) TransactionPooled(ctx context.Context) (bool, error) {
	c.pooler.mu.Lock()
	defer c.pooler.mu.Unlock()
	if c.pooler.known {
		return c.pooler.pooled, nil
	}
	q := c.d.sessionIDSQL()
	if q == "" || c.db.Stats().MaxOpenConnections == 1 {
		c.pooler.known = true
		return false, nil
	}
	pooled, err := c.sessionsChange(ctx, q)
	if err != nil {
		return false, fmt.Errorf("compare server sessions on %s: %w", c.where, c.translate(err))
	}
	c.pooler.known, c.pooler.pooled = true, pooled
	return pooled, nil
}

// sessionsChange runs the comparison TransactionPooled describes with the session id statement q.
func (c *Conn) sessionsChange(ctx context.Context, q string) (bool, error) {
	a, err := c.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := c.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer b.Close()
	var first, other, second int64
	if err := a.QueryRowContext(ctx, q).Scan(&first); err != nil {
		return false, err
	}
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, q).Scan(&other); err != nil {
		return false, err
	}
	if err := a.QueryRowContext(ctx, q).Scan(&second); err != nil {
		return false, err
	}
	return other == first || second != first, nil
}

// transactionsAllowed fails, saying why and what to change, where a pooler refuses transactions
// (PgBouncer's statement pooling): every claim is one, PHP's too.
func (c *Conn) transactionsAllowed(ctx context.Context) error {
	if c.d.sessionIDSQL() == "" {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err == nil {
		err = tx.Rollback()
	}
	if err != nil && strings.Contains(err.Error(), "statement pooling mode") {
		return fmt.Errorf("connect to %s: %w; the connection pooler runs statement pooling, which refuses transactions, and every claim of a job is one (PHP's too): give the queue's database pool_mode = transaction or session in pgbouncer.ini", c.where, err)
	}
	return nil
}

// sawPooled records that a session changed under a connection after TransactionPooled said it would
// not (a pooler that happened to hand the same server connection back during the comparison).
func (c *Conn) sawPooled() {
	c.pooler.mu.Lock()
	c.pooler.known, c.pooler.pooled = true, true
	c.pooler.mu.Unlock()
}
