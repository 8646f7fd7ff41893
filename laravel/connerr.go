package laravel

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrCommitUnknown means a transaction's COMMIT was sent but its answer never came back (the
// connection broke): the transaction may or may not have committed. A fenced completion resolves this
// by trying again (its fence fails if the first one committed); a non-idempotent change must not be
// repeated blindly.
var ErrCommitUnknown = errors.New("commit outcome unknown")

// ConnectionLost reports whether err means the database could not be reached or the connection broke
// (refused, reset, closed, server shutting down or starting up, too many connections), as opposed to
// the server refusing the statement itself. Such an operation can be tried again after reconnecting;
// whatever it changed was rolled back, unless the error also wraps ErrCommitUnknown.
func ConnectionLost(err error) bool {
	if err == nil || errors.Is(err, ErrReservationLost) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		switch my.Number {
		case 1040, 1053, 1077, 1152, 1153, 1158, 1159, 1160, 1161, 1927, 2002, 2003, 2006, 2013:
			// too many connections, shutdown in progress, normal shutdown, aborted connection, packet
			// errors, connection killed, and the client's can't-connect and gone-away codes.
			return true
		case 1047:
			// SQLSTATE 08S01 from a Galera node cut off from the cluster's primary component ("WSREP
			// has not yet prepared node for application use"): it refuses every statement on a table,
			// changing nothing, until it joins again.
			return my.SQLState == [5]byte{'0', '8', 'S', '0', '1'}
		case 1568:
			// "Transaction characteristics can't be changed while a transaction is in progress" at
			// BEGIN: the session is still inside a transaction that a failed COMMIT left open. The
			// connection is closed (see inTxIsolation) and the next one is clean.
			return true
		case 1180:
			// A Galera node that lost the primary component during a statement or its COMMIT ("Error
			// while appending streaming replication fragment (provider status: Not connected to
			// Primary Component)"): its write set was never certified, so nothing was written.
			return strings.Contains(strings.ToLower(my.Message), "primary component")
		}
		return false
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// Class 08 is connection exception; 57P01-57P03 are shutdowns and "cannot connect now";
		// 53300 is too many connections.
		return strings.HasPrefix(pg.Code, "08") || pg.Code == "57P01" || pg.Code == "57P02" || pg.Code == "57P03" || pg.Code == "53300"
	}
	var connect *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &connect) || errors.As(err, &ne) || pgconn.SafeToRetry(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection refused", "connection reset", "broken pipe", "bad connection", "server closed the connection"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// StatementTimeout reports whether the server cancelled a statement that ran past its own limit:
// PostgreSQL's statement_timeout (57014, when the caller's context did not end), MariaDB's
// max_statement_time (1969), MySQL's max_execution_time (3024). The statement changed nothing, and the
// same one may work once what held it up has passed.
func StatementTimeout(err error) bool {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		return my.Number == 1969 || my.Number == 3024
	}
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "57014"
}

// commitErr marks an error of COMMIT that lost the connection as ErrCommitUnknown.
func commitErr(err error) error {
	if err == nil || !ConnectionLost(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
}
