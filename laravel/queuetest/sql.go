package queuetest

import (
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/internal/rawsql"
	"github.com/jmoiron/sqlx"
)

// DB returns c's pool, for tests that set up or inspect rows in ways no method of the laravel package
// offers (a reservation moved into the past, a lock held by a second transaction).
func DB(c *laravel.Conn) *sqlx.DB { return rawsql.Of(c).DB }

// Q quotes a table or column name for c's dialect.
func Q(c *laravel.Conn, name string) string { return rawsql.Of(c).Quote(name) }

// Rebind turns ? placeholders into c's dialect's.
func Rebind(c *laravel.Conn, q string) string { return rawsql.Of(c).Rebind(q) }
