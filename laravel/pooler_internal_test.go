package laravel

import (
	"context"
	"database/sql"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestTransactionPooled: connections straight to a server reach sessions of their own; through
// PgBouncer's session pooling too; through its transaction pooling they do not.
func TestTransactionPooled(t *testing.T) {
	ctx := context.Background()
	want := func(t *testing.T, db testenv.Database, pooled bool) {
		t.Helper()
		c, _ := openTables(t, db, "pooled", OpenParams{}, SchemaParams{})
		for i := range 2 { // asked, then remembered
			got, err := c.TransactionPooled(ctx)
			if err != nil || got != pooled {
				t.Fatalf("TransactionPooled (call %d) = %v, %v; want %v", i+1, got, err, pooled)
			}
		}
	}
	testenv.Each(t, func(t *testing.T, db testenv.Database) { want(t, db, false) })
	t.Run("pgbouncer-session", func(t *testing.T) {
		t.Parallel()
		want(t, testenv.PostgresPooled(t, "session"), false)
	})
	t.Run("pgbouncer-transaction", func(t *testing.T) {
		t.Parallel()
		want(t, testenv.PostgresPooled(t, "transaction"), true)
	})
}

// TestLanesLeadBehindTransactionPooler: behind PgBouncer, in transaction pooling as in session
// pooling, of two processes at 256 jobs at once one leads and runs two lanes: the lead is a lock of a
// transaction kept open, which the pooler keeps with its client. (A session's lock stayed on a
// pooled server connection, which took it again for the other process: both ran two lanes, and it
// outlived them.) Once the leader gives the lead up, no lock is left on the server.
func TestLanesLeadBehindTransactionPooler(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			db := testenv.PostgresPooled(t, mode)
			c1, tables := openTables(t, db, "poollead", OpenParams{}, SchemaParams{})
			c2, err := Open(ctx, OpenParams{Dialect: Postgres, DSN: db.DSN, Tables: tables})
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			a, _ := leadQueues(t, c1, db)
			b, _ := leadQueues(t, c2, db)
			// Counted on the server itself, past the pooler.
			direct := testenv.Postgres(t).Open(t)
			locks := func() int {
				t.Helper()
				var n int
				if err := direct.QueryRowContext(ctx, `select count(*) from pg_locks
					where locktype = 'advisory' and classid = 6383471 and database = (select oid from pg_database where datname = $1)`, db.Name).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			a.AddSlots(256)
			b.AddSlots(256)
			if got := [2]int{a.LanesFor(256), b.LanesFor(256)}; got != [2]int{2, 1} {
				t.Errorf("lanes of the two processes: %v, want [2 1]", got)
			}
			if n := locks(); n != 1 {
				t.Errorf("%d advisory locks of the lanes' lead on the server while one process leads, want 1", n)
			}
			leadHoldsNoSnapshot(t, "leading", direct, a.lead.session)
			for i := range 3 { // renewed in new transactions, wherever the pooler runs them
				leadDue(a)
				if !a.lead.take(time.Now()) {
					t.Fatalf("renewal %d: the lead was lost", i+1)
				}
				if n := locks(); n != 1 {
					t.Errorf("renewal %d: %d advisory locks of the lead on the server, want 1", i+1, n)
				}
				leadHoldsNoSnapshot(t, "renewed", direct, a.lead.session)
			}
			a.AddSlots(-256) // too few jobs for lanes: the lead is given up
			b.AddSlots(-256)
			for deadline := time.Now().Add(10 * time.Second); locks() != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("%d advisory locks left 10 s after the lead was given up, want 0", locks())
				}
				runtime.Gosched() // the server ends the closed session's transaction
			}
		})
	}
}

// TestLanesLeadSessionChanged: a lead whose check finds itself on another server session than the one
// that took the lock marks the Conn as pooled. On MySQL, whose lead is a session's lock, the lead is
// given up and not asked for again (the lock may stay with a server connection other clients
// share); on PostgreSQL, whose lead is renewed in a new transaction at each check, the lock is then
// held on the new session and the queue keeps the lead.
func TestLanesLeadSessionChanged(t *testing.T) {
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c, _ := openTables(t, db, "leadmoved", OpenParams{}, SchemaParams{})
		a, _ := leadQueues(t, c, db)
		a.AddSlots(256)
		defer a.AddSlots(-256)
		if n := a.LanesFor(256); n != 2 || a.lead.conn == nil {
			t.Fatalf("LanesFor(256) = %d, lead held %v; want 2 lanes and the lead", n, a.lead.conn != nil)
		}
		a.lead.mu.Lock()
		a.lead.session++ // as if the lock had been taken by another server session than the one answering now
		a.lead.next = time.Time{}
		a.lead.mu.Unlock()
		want, lead := 1, false
		if db.Dialect == "pgsql" {
			want, lead = 2, true
		}
		if n := a.LanesFor(256); n != want || (a.lead.conn != nil) != lead {
			t.Errorf("after the session changed: LanesFor(256) = %d, lead held %v; want %d lanes, lead %v", n, a.lead.conn != nil, want, lead)
		}
		if pooled, err := c.TransactionPooled(context.Background()); err != nil || !pooled {
			t.Errorf("TransactionPooled after the session changed = %v, %v; want true", pooled, err)
		}
		leadDue(a)
		if n := a.LanesFor(256); n != want || (a.lead.conn != nil) != lead {
			t.Errorf("asked again: LanesFor(256) = %d, lead held %v; want %d lanes, lead %v", n, a.lead.conn != nil, want, lead)
		}
		if lead {
			leadHoldsNoSnapshot(t, "renewed on the session answering", c.db, a.lead.session)
		}
	})
}

// TestLanesLeadRenewed: on PostgreSQL each check of the lead ends its transaction and takes the lock
// in a new one, so the transaction is never older than leadRetry; the lock stays held by exactly one
// session throughout, and another queue on the table does not get it.
func TestLanesLeadRenewed(t *testing.T) {
	db := testenv.Postgres(t)
	c, _ := openTables(t, db, "leadrenewed", OpenParams{}, SchemaParams{})
	a, b := leadQueues(t, c, db)
	a.AddSlots(256)
	b.AddSlots(256)
	defer a.AddSlots(-256)
	defer b.AddSlots(-256)
	ctx := context.Background()
	started := func() (time.Time, int) {
		t.Helper()
		var at time.Time
		var locks int
		// The locks on this table's lead key only: tests of other packages run workers that lead their
		// own tables in the same database.
		if err := c.db.QueryRowContext(ctx, `select xact_start, (select count(*) from pg_locks where locktype = 'advisory' and classid = 6383471 and granted
			and database = (select oid from pg_database where datname = current_database())
			and objid::bigint = (hashtext(current_schema() || '.' || $2)::bigint & 4294967295)) from pg_stat_activity where pid = $1`, a.lead.session, c.tables.Jobs).Scan(&at, &locks); err != nil {
			t.Fatal(err)
		}
		return at, locks
	}
	first, locks := started()
	if locks != 1 {
		t.Fatalf("%d lead locks held, want 1", locks)
	}
	for deadline := time.Now().Add(5 * time.Second); ; runtime.Gosched() {
		if now, _ := started(); now.After(first) {
			break // the server's clock has moved past the first transaction's start
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's transaction start time did not move in 5 s")
		}
		leadDue(a)
		if !a.lead.take(time.Now()) {
			t.Fatal("the lead was lost at its renewal")
		}
	}
	if _, locks := started(); locks != 1 {
		t.Errorf("%d lead locks held after the renewals, want 1", locks)
	}
	leadHoldsNoSnapshot(t, "renewed", c.db, a.lead.session)
	leadDue(b)
	if got := [2]int{a.LanesFor(256), b.LanesFor(256)}; got != [2]int{2, 1} {
		t.Errorf("lanes after the renewals: %v, want [2 1]", got)
	}
}

// TestLanesLeadRenewedWhileIdle: a queue that leads but claims nothing (its workers paused, or every
// slot's job running long) still renews the lead's transaction on its own, and stops once it gives
// the lead up.
func TestLanesLeadRenewedWhileIdle(t *testing.T) {
	db := testenv.Postgres(t)
	c, _ := openTables(t, db, "leadidle", OpenParams{}, SchemaParams{})
	a, _ := leadQueues(t, c, db)
	a.lead.renewEvery = 50 * time.Millisecond
	a.AddSlots(256)
	if a.lead.conn == nil {
		t.Fatal("the queue did not take the lead")
	}
	ctx := context.Background()
	pid := a.lead.session
	xactStart := func() time.Time {
		t.Helper()
		var at sql.NullTime // NULL in the moment between two transactions
		if err := c.db.QueryRowContext(ctx, "select xact_start from pg_stat_activity where pid = $1", pid).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.Time
	}
	first := xactStart()
	renewals := 0
	for last, deadline := first, time.Now().Add(10*time.Second); renewals < 3; runtime.Gosched() {
		if now := xactStart(); now.After(last) {
			renewals++
			last = now
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals of the idle lead's transaction in 10 s, want 3", renewals)
		}
	}
	// Renewed every 50 ms, the session is caught in a renewal's statements now and then: it is looked
	// at between two of them.
	for deadline := time.Now().Add(5 * time.Second); ; runtime.Gosched() {
		var state string
		var xmin, xid sql.NullString
		if err := c.db.QueryRowContext(ctx, "select state, backend_xmin::text, backend_xid::text from pg_stat_activity where pid = $1", pid).Scan(&state, &xmin, &xid); err != nil {
			t.Fatal(err)
		}
		if state == "active" && time.Now().Before(deadline) {
			continue
		}
		if state != "idle in transaction" || xmin.Valid || xid.Valid {
			t.Errorf("renewed while idle: the lead's session is %q with backend_xmin %q and backend_xid %q; want idle in transaction with neither", state, xmin.String, xid.String)
		}
		break
	}
	a.AddSlots(-256) // the lead given up: the renewals stop with it
	a.lead.mu.Lock()
	stopped := a.lead.keepAlive == nil && a.lead.conn == nil
	a.lead.mu.Unlock()
	if !stopped {
		t.Error("the lead was given up, but its renewal timer or connection is still there")
	}
}

// TestLanesLeadRenewedWithinServerTimeout: a server that ends a transaction left idle for a second
// (idle_in_transaction_session_timeout, here set for the worker's sessions) does not end the lead's,
// which is renewed within half of it, with no claim checking it; the same session keeps the lock.
func TestLanesLeadRenewedWithinServerTimeout(t *testing.T) {
	db := testenv.Postgres(t)
	db.DSN += "&idle_in_transaction_session_timeout=1000"
	c, _ := openTables(t, db, "leadtimeout", OpenParams{}, SchemaParams{})
	a := leadingQueue(t, c, db)
	pid := a.lead.session
	ctx := context.Background()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	state := func() (alive, locks int) {
		t.Helper()
		if err := c.db.QueryRowContext(ctx, `select count(*), (select count(*) from pg_locks where locktype = 'advisory' and classid = 6383471 and granted and pid = $1)
			from pg_stat_activity where pid = $1`, pid).Scan(&alive, &locks); err != nil {
			t.Fatal(err)
		}
		return alive, locks
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); <-tick.C {
		if alive, _ := state(); alive != 1 {
			t.Fatalf("the lead's session %d is gone: the server ended its idle transaction", pid)
		}
	}
	// The lock is held but for the moment between two of the lead's transactions.
	for end := time.Now().Add(time.Second); ; <-tick.C {
		if _, locks := state(); locks == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the lead's session %d holds no lead lock", pid)
		}
	}
}

// TestOpenThroughPoolerWithSchema: PgBouncer refuses search_path at connect; the error says to move
// DB_SCHEMA to the role, not to check the host and password.
func TestOpenThroughPoolerWithSchema(t *testing.T) {
	db := testenv.PostgresPooled(t, "transaction")
	_, err := Open(context.Background(), OpenParams{Dialect: Postgres, Host: db.Host, Port: db.Port, Database: db.Name, Username: db.User, Schema: "app"})
	if err == nil {
		t.Fatal("opened with a search_path through PgBouncer; want its refusal")
	}
	for _, want := range []string{"unsupported startup parameter: search_path", "unset DB_SCHEMA", "ALTER ROLE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "DB_PASSWORD") {
		t.Errorf("error %q points at the credentials", err)
	}
}

// TestDoctorTransactionPooler: queue:doctor notes a transaction pooler, and only there.
func TestDoctorTransactionPooler(t *testing.T) {
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c, _ := openTables(t, testenv.PostgresPooled(t, mode), "doctorpool", OpenParams{}, SchemaParams{})
			fs, err := Diagnose(context.Background(), c, DoctorParams{})
			if err != nil {
				t.Fatal(err)
			}
			found := slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == "transaction-pooler" && f.Severity == SeverityNote })
			if found != (mode == "transaction") {
				t.Errorf("%s pooling: the transaction-pooler note found %v in %+v", mode, found, fs)
			}
		})
	}
}

// TestOpenThroughStatementPooling: PgBouncer's statement pooling refuses transactions, which every
// claim needs: Open fails, saying so and naming pool_mode.
func TestOpenThroughStatementPooling(t *testing.T) {
	db := testenv.PostgresPooled(t, "statement")
	_, err := Open(context.Background(), OpenParams{Dialect: Postgres, DSN: db.DSN})
	if err == nil {
		t.Fatal("opened through statement pooling; want an error")
	}
	for _, want := range []string{"statement pooling", "pool_mode = transaction or session"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
