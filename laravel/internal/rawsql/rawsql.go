// Package rawsql hands the packages under laravel/ that work on tables outside the queue's own
// operations (the conformance suite's fixtures, the benchmark's bare SQL loop) a connection's pool and
// dialect. The laravel package keeps both unexported, so that applications and the other packages of
// artisan-go reach the database only through its methods.
package rawsql

import "github.com/jmoiron/sqlx"

// Handle is one laravel.Conn's pool and dialect.
type Handle struct {
	DB     *sqlx.DB
	Quote  func(name string) string // quotes an identifier
	Rebind func(q string) string    // turns ? placeholders into the dialect's
	// UpdateReturning says the server claims with UPDATE … RETURNING; Lock is its pop lock clause.
	UpdateReturning bool
	Lock            string
}

// Of returns the Handle of a *laravel.Conn. The laravel package sets it.
var Of func(conn any) Handle
