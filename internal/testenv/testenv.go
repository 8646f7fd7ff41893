// Package testenv finds the real databases and tools that tests run against and gives each test an
// isolated place in them.
//
// Tests never use mocks: they talk to MariaDB/MySQL, PostgreSQL, embedded SQLite and, for interop, a
// real PHP with Laravel. When one of those is missing on a developer's laptop the test is skipped with a
// message that names what is missing and how to get it. When ARTISAN_GO_REQUIRE_ALL=1 (as .ci/run sets
// it) every such skip becomes a failure, so CI cannot pass by skipping.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"
)

// RequireAllEnv is the environment variable that turns every "missing component" skip into a failure.
const RequireAllEnv = "ARTISAN_GO_REQUIRE_ALL"

// Environment variables that point the tests at other servers than the local defaults.
const (
	MySQLDSNEnv    = "ARTISAN_GO_MYSQL_DSN" // go-sql-driver form without a database, e.g. root@tcp(127.0.0.1:3306)/
	PostgresDSNEnv = "ARTISAN_GO_PGSQL_DSN" // URL form, e.g. postgres://postgres@127.0.0.1:5432/test
)

const (
	defaultMySQLDSN    = "root@tcp(127.0.0.1:3306)/"
	defaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// Database describes one isolated database prepared for a test. Dialect uses Laravel's connection
// driver names, so the same value configures both artisan-go and a PHP Laravel app.
type Database struct {
	Dialect  string // "mysql", "pgsql" or "sqlite"
	Driver   string // database/sql driver name: "mysql", "pgx" or "sqlite"
	DSN      string // DSN for Driver, pointing at the isolated database
	Host     string
	Port     int
	Name     string // database name; for SQLite the file path
	User     string
	Password string
	Schema   string // PostgreSQL schema that isolates the test; empty elsewhere
	Pooler   string // PgBouncer's pool mode when the DSN reaches the server through it (PostgresPooled)
}

// Env returns the Laravel .env variables that point an application at this database.
func (d Database) Env() []string {
	env := []string{"DB_CONNECTION=" + d.Dialect, "DB_DATABASE=" + d.Name}
	if d.Dialect != "sqlite" {
		env = append(env,
			"DB_HOST="+d.Host,
			"DB_PORT="+strconv.Itoa(d.Port),
			"DB_USERNAME="+d.User,
			"DB_PASSWORD="+d.Password,
		)
	}
	if d.Schema != "" {
		env = append(env, "DB_SCHEMA="+d.Schema)
	}
	if d.Pooler == "transaction" {
		// The test app's switch for PDO::ATTR_EMULATE_PREPARES: PDO's named prepared statements do
		// not follow a client from one of the pooler's server connections to the next.
		env = append(env, "DB_EMULATE_PREPARES=true")
	}
	return env
}

// HelperDSN is DSN for the tests' own database/sql handles. Through a pooler it asks pgx for unnamed
// statements: its named ones would stay on one of the pooler's server connections, and the next
// client given it would fail to prepare them again. (artisan-go's own connections use unnamed
// statements already.)
func (d Database) HelperDSN() string {
	if d.Pooler != "" {
		return d.DSN + "&default_query_exec_mode=exec"
	}
	return d.DSN
}

// Open opens the database with database/sql and closes it when the test ends.
func (d Database) Open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.Driver, d.HelperDSN())
	if err != nil {
		t.Fatalf("open %s: %v", d.Dialect, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// RequireAll reports whether missing components must fail tests instead of skipping them.
func RequireAll() bool {
	v := os.Getenv(RequireAllEnv)
	return v != "" && v != "0" && v != "false"
}

// Missing skips the test because a component is missing, or fails it when RequireAll is set. The
// message must name the component and how to provide it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatalf("%s (%s is set, so missing components fail)", msg, RequireAllEnv)
	}
	t.Skip(msg)
}

// Name returns a short random identifier that is safe as a database, schema or table name.
func Name(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// postgresCreate creates a schema or a database (what) named name on the tests' PostgreSQL server,
// and runs drop (its name at %s) when the test ends. It returns the server's URL.
func postgresCreate(t testing.TB, what, name, drop string) *url.URL {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base == "" {
		base = defaultPostgresDSN
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresDSNEnv, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		Missing(t, "PostgreSQL is not reachable at %s (%v): start it (see README, \"Databases\") or set %s", u.Host, err, PostgresDSNEnv)
	}
	if _, err := admin.ExecContext(ctx, "CREATE "+what+` "`+name+`"`); err != nil {
		t.Fatalf("create %s %s: %v", what, name, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec(fmt.Sprintf(drop, name))
	})
	return u
}

// MySQL creates an empty database on the MariaDB/MySQL server and drops it when the test ends.
func MySQL(t testing.TB) Database {
	t.Helper()
	base := os.Getenv(MySQLDSNEnv)
	if base == "" {
		base = defaultMySQLDSN
	}
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s: %v", MySQLDSNEnv, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("open mysql: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		Missing(t, "MariaDB/MySQL is not reachable at %s (%v): start it (see README, \"Databases\") or set %s", cfg.Addr, err, MySQLDSNEnv)
	}
	name := Name("ag")
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec("DROP DATABASE IF EXISTS `" + name + "`")
	})
	c := cfg.Clone()
	c.DBName = name
	host, port := splitHostPort(cfg.Addr, 3306)
	return Database{
		Dialect: "mysql", Driver: "mysql", DSN: c.FormatDSN(),
		Host: host, Port: port, Name: name, User: cfg.User, Password: cfg.Passwd,
	}
}

// Postgres creates an empty schema in the PostgreSQL database and drops it when the test ends. The
// returned DSN sets search_path to that schema.
func Postgres(t testing.TB) Database {
	t.Helper()
	schema := Name("ag")
	u := postgresCreate(t, "schema", schema, `DROP SCHEMA IF EXISTS "%s" CASCADE`)
	q := u.Query()
	q.Set("search_path", schema)
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	u2 := *u
	u2.RawQuery = q.Encode()
	host, port := splitHostPort(u.Host, 5432)
	pass, _ := u.User.Password()
	return Database{
		Dialect: "pgsql", Driver: "pgx", DSN: u2.String(),
		Host: host, Port: port, Name: strings.TrimPrefix(u.Path, "/"), User: u.User.Username(),
		Password: pass, Schema: schema,
	}
}

// PostgresDatabase creates an empty database of its own on the PostgreSQL server, dropped when the
// test ends, reached without a search_path: its tables go in public, as an application's that sets
// no schema.
func PostgresDatabase(t testing.TB) Database {
	t.Helper()
	name := Name("agd")
	u := postgresCreate(t, "database", name, `drop database if exists "%s" with (force)`)
	u2 := *u
	u2.Path = "/" + name
	q := u2.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	u2.RawQuery = q.Encode()
	host, port := splitHostPort(u.Host, 5432)
	pass, _ := u.User.Password()
	return Database{Dialect: "pgsql", Driver: "pgx", DSN: u2.String(), Host: host, Port: port, Name: name, User: u.User.Username(), Password: pass}
}

// SQLite creates a new SQLite database file in the test's temporary directory.
func SQLite(t testing.TB) Database {
	t.Helper()
	path := filepath.Join(t.TempDir(), "database.sqlite")
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("create sqlite file: %v", err)
	}
	f.Close()
	return Database{Dialect: "sqlite", Driver: "sqlite", DSN: path, Name: path}
}

// Each runs fn as a subtest once per database dialect, each with its own isolated database. The
// subtests run in parallel (they share nothing), so they finish after the caller's function returns:
// fn must not call t.Parallel or t.Setenv, and the caller must not clean up what fn uses when it
// returns.
func Each(t *testing.T, fn func(t *testing.T, db Database)) {
	t.Helper()
	for _, d := range []struct {
		name string
		make func(testing.TB) Database
	}{{"mysql", MySQL}, {"pgsql", Postgres}, {"sqlite", SQLite}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			fn(t, d.make(t))
		})
	}
}

// Apart returns the database for one of several subtests that use db at once: the same MySQL
// database or PostgreSQL schema (each subtest creates tables of its own in it), or a new SQLite file,
// since writers to one SQLite file queue behind each other.
func Apart(t testing.TB, db Database) Database {
	t.Helper()
	if db.Dialect == "sqlite" {
		return SQLite(t)
	}
	return db
}

func splitHostPort(addr string, def int) (string, int) {
	host, port := addr, def
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
		if p, err := strconv.Atoi(addr[i+1:]); err == nil {
			port = p
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port
}

// FreePort returns a TCP port on 127.0.0.1 nothing listens on now, for a server a test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
