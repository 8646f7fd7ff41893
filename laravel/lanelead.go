package laravel

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"time"
)

// autoLaneSlots is how many of its workers' slots each lane needs where the lanes are QueueParams.Lanes
// 0's: one `queue:work` process at its defaults (256 jobs at once) ran 19–28 % (MariaDB) and 8–33 %
// (PostgreSQL) faster in two lanes of 128 than in one, in medians of alternated rounds on two days;
// lanes of 64 ran no faster than one.
const autoLaneSlots = 128

// autoLanes is how many lanes QueueParams.Lanes 0 may run.
const autoLanes = 2

// leadRetry is how often a queue that leads checks that its session still holds the lead, and how
// long one that found the lead taken waits before it tries again (the process holding it may have
// stopped).
const leadRetry = 10 * time.Second

// leadTimeout bounds each of the lead's round trips: the lead is worth no wait, and a server that
// does not answer within it is better served by one lane.
const leadTimeout = 2 * time.Second

// laneLead is the lock that lets one batch queue run lanes at QueueParams.Lanes 0, among every queue
// on the same jobs table of the same server, whatever host or container it runs in. One process alone
// on the server is faster in two lanes; 16 processes of two lanes each ran a third slower than of one
// (twice as many transactions, each claim skipping the rows the others hold), and no process sees how
// many others claim beside it. The server does: a lock of the session (GET_LOCK, an advisory lock),
// held on a connection of the leading queue's own, which the server drops when the session ends, so a
// process that dies or loses its connection gives the lead up. However many processes claim from a
// table, one of them runs a second lane. Every failure (no grant needed, but a server that refuses the
// lock, or one that does not answer) means one lane. On PostgreSQL the lock is a transaction's, kept
// open on that connection and renewed in a new one at every check, which a transaction pooler
// (PgBouncer) keeps with its client; a session's lock (MySQL's GET_LOCK) would stay there on a server
// connection that other clients go on using, and take the lock again for any of them, so behind such
// a pooler (see Conn.TransactionPooled) it is not asked for: one lane, unless QueueParams.Lanes asks
// for more.
type laneLead struct {
	c     *Conn
	table string

	mu      sync.Mutex
	conn    *sql.Conn // the session holding the lock, while this queue leads
	session int64     // its server session's id, checked with the lead
	next    time.Time // when the lead is next checked (held) or tried again (not held)

	// On PostgreSQL: when the lead's transaction began, and the timer that renews it while no claim
	// checks the lead (the workers paused, or every slot's job running long); renewEvery is how
	// often at most, leadRetry when 0; ended, the soonest the server ends an idle transaction
	// (idle_in_transaction_session_timeout, transaction_timeout), 0 for never.
	begun      time.Time
	keepAlive  *time.Timer
	renewEvery time.Duration
	ended      time.Duration
}

// take makes the queue the lead if no other session holds the lock, checks at most every leadRetry that
// the session of a lead this queue holds is alive (on PostgreSQL: renews its transaction), and says
// whether the queue leads.
func (h *laneLead) take(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now.Before(h.next) {
		return h.conn != nil
	}
	h.next = now.Add(leadRetry)
	ctx, cancel := context.WithTimeout(context.Background(), leadTimeout)
	defer cancel()
	q, inTx := h.c.d.leadLockSQL()
	if h.conn != nil {
		if inTx {
			if h.renewLocked(ctx, q) {
				h.begun = now
				return true
			}
			h.dropLocked()
			return false
		}
		var session int64
		err := h.conn.QueryRowContext(ctx, h.c.d.sessionIDSQL(), h.c.d.keepNoSnapshot()...).Scan(&session)
		if err == nil && session == h.session {
			return true
		}
		if err == nil {
			h.c.sawPooled() // the lock stayed with a server connection this client no longer has
		}
		h.dropLocked() // the session, and with it the lock, is gone: another process may lead now
		return false
	}
	if q == "" {
		return false
	}
	if !inTx {
		if pooled, err := h.c.TransactionPooled(ctx); err != nil || pooled {
			return false
		}
	}
	conn, err := h.c.db.Conn(ctx)
	if err != nil {
		return false
	}
	if inTx {
		// Begun as a statement: the transaction outlives this call, which database/sql's own would
		// not (it ends with ctx). The driver does not hand the connection back to the pool while
		// it is inside a transaction.
		if _, err := conn.ExecContext(ctx, "begin"); err != nil {
			discard(conn)
			return false
		}
	}
	var got int
	if err := conn.QueryRowContext(ctx, q, h.c.d.keepNoSnapshot(h.table)...).Scan(&got); err != nil {
		discard(conn) // its session may hold the lock if only the answer was lost
		return false
	}
	if got != 1 {
		// Another session leads; this one holds nothing.
		if inTx {
			discard(conn)
		} else {
			conn.Close()
		}
		return false
	}
	if err := conn.QueryRowContext(ctx, h.c.d.sessionIDSQL(), h.c.d.keepNoSnapshot()...).Scan(&h.session); err != nil {
		discard(conn)
		return false
	}
	h.conn = conn
	if inTx {
		// The server may end a transaction left idle, or any transaction, after a while of its own:
		// the lead is renewed within half of it (see renewIdle).
		h.ended = 0
		if q := h.c.d.idleTimeoutSQL(); q != "" {
			var ms int64
			if err := conn.QueryRowContext(ctx, q, h.c.d.keepNoSnapshot()...).Scan(&ms); err == nil && ms > 0 {
				h.ended = time.Duration(ms) * time.Millisecond
			}
		}
		h.begun = now
		h.keepAlive = time.AfterFunc(h.every(), h.renewIdle)
	}
	h.c.leadsMu.Lock()
	if h.c.leads == nil {
		h.c.leads = map[*laneLead]bool{}
	}
	h.c.leads[h] = true
	h.c.leadsMu.Unlock()
	return true
}

// renewLocked ends the lead's transaction and takes the lock again in a new one, so that the
// transaction is never much older than every() says: a transaction open for as long as the process
// runs looks like a leak to the server's monitoring, and the server's idle or transaction timeout
// would end it. Another process that asks in the moment between the two may take the lead; this one then
// gives it up, and either way one process leads. It reports whether this queue still leads.
func (h *laneLead) renewLocked(ctx context.Context, q string) bool {
	if _, err := h.conn.ExecContext(ctx, "commit"); err != nil {
		return false
	}
	if _, err := h.conn.ExecContext(ctx, "begin"); err != nil {
		return false
	}
	var got int
	if err := h.conn.QueryRowContext(ctx, q, h.c.d.keepNoSnapshot(h.table)...).Scan(&got); err != nil || got != 1 {
		return false
	}
	var session int64
	if err := h.conn.QueryRowContext(ctx, h.c.d.sessionIDSQL(), h.c.d.keepNoSnapshot()...).Scan(&session); err != nil {
		return false
	}
	if session != h.session {
		h.c.sawPooled() // a new transaction reached another server session: the lock is held there now
		h.session = session
	}
	return true
}

// every is how often the lead's transaction is renewed at most: every leadRetry, or within half the
// time after which the server would end it.
func (h *laneLead) every() time.Duration {
	every := leadRetry
	if h.renewEvery > 0 {
		every = h.renewEvery
	}
	if h.ended > 0 {
		every = min(every, max(h.ended/2, minRenewal))
	}
	return every
}

// minRenewal bounds how often the lead's transaction is renewed, whatever the server's timeouts.
const minRenewal = 100 * time.Millisecond

// renewIdle renews the lead's transaction when no check has for renewEvery, and comes back when the
// next renewal is due, for as long as the queue leads. A lead it cannot renew is given up, and the
// next claim splits the slots again.
func (h *laneLead) renewIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil || h.keepAlive == nil {
		return
	}
	if since := time.Since(h.begun); since < h.every() {
		h.keepAlive.Reset(h.every() - since)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leadTimeout)
	defer cancel()
	q, _ := h.c.d.leadLockSQL()
	if !h.renewLocked(ctx, q) {
		h.dropLocked()
		h.next = time.Time{}
		return
	}
	h.begun = time.Now()
	h.keepAlive.Reset(h.every())
}

// due says whether the lead is to be checked or tried again.
func (h *laneLead) due(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !now.Before(h.next)
}

// release lets another process lead, once this queue's workers no longer run enough jobs for lanes.
func (h *laneLead) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		h.dropLocked()
		h.next = time.Time{} // lanes again as soon as the workers run enough jobs
	}
}

func (h *laneLead) dropLocked() {
	if h.keepAlive != nil {
		h.keepAlive.Stop()
		h.keepAlive = nil
	}
	if h.conn != nil {
		if q, args := h.c.d.leadUnlockSQL(h.table); q != "" {
			// Given back at once: a closed session's locks go only once the server has noticed, and
			// a process asking in the meantime would find the lead taken.
			ctx, cancel := context.WithTimeout(context.Background(), leadTimeout/2)
			_, _ = h.conn.ExecContext(ctx, q, args...)
			cancel()
		}
		discard(h.conn)
		h.conn = nil
		h.c.leadsMu.Lock()
		delete(h.c.leads, h)
		h.c.leadsMu.Unlock()
	}
}

// discard closes a connection's session instead of handing it back to the pool, so that the server
// drops the locks it holds.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
