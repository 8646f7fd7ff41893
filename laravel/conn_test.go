package laravel_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/laravel/queuetest"
)

func TestVersionCompare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"8.0.1", "8.0.1", 0},
		{"8.0.0", "8.0.1", -1},
		{"8.0.36", "8.0.1", 1},
		{"5.7.44-log", "8.0.1", -1},
		{"8.0.mysql_aurora.3.04.0", "8.0.1", -1},
		{"16.3 (Debian 16.3-1.pgdg120+1)", "9.5", 1},
		{"9.4.26", "9.5", -1},
		{"9.5", "9.5", 0},
		{"10.11.19", "10.6.0", 1},
		{"10.6", "10.6.0", -1},
		{"1.0rc1", "1.0", -1},
		{"1.0pl1", "1.0", 1},
		{"1.0-dev", "1.0alpha", -1},
		{"", "1", -1},
		{"", "", 0},
	} {
		if got := laravel.VersionCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("VersionCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPopLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d               laravel.Dialect
		version         string
		engine, wantSQL string
	}{
		{laravel.MySQL, "8.0.36", "mysql", "FOR UPDATE SKIP LOCKED"},
		{laravel.MySQL, "8.0.0", "mysql", "for update"},
		{laravel.MySQL, "5.7.44-log", "mysql", "for update"},
		{laravel.MySQL, "8.0.mysql_aurora.3.04.0", "mysql", "for update"},
		{laravel.MySQL, "10.11.19-MariaDB-0+deb12u1", "mariadb", "FOR UPDATE SKIP LOCKED"},
		{laravel.MySQL, "5.5.5-10.11.19-MariaDB-0+deb12u1", "mariadb", "FOR UPDATE SKIP LOCKED"},
		{laravel.MySQL, "5.5.5-10.5.23-MariaDB-1", "mariadb", "for update"},
		{laravel.MySQL, "10.6.0-MariaDB", "mariadb", "FOR UPDATE SKIP LOCKED"},
		{laravel.Postgres, "15.20 (Debian 15.20-0+deb12u1)", "pgsql", "FOR UPDATE SKIP LOCKED"},
		{laravel.Postgres, "9.4.26", "pgsql", "for update"},
		{laravel.SQLite, "3.46.0", "sqlite", ""},
	} {
		engine, lock := laravel.PopLock(tc.d, tc.version)
		if engine != tc.engine || lock != tc.wantSQL {
			t.Errorf("PopLock(%s, %q) = %q, %q; want %q, %q", tc.d, tc.version, engine, lock, tc.engine, tc.wantSQL)
		}
	}
}

func TestOpenDetectsVersionAndLock(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		p := queuetest.OpenParams(db)
		c := queuetest.Open(t, p)
		if c.ServerVersion() == "" {
			t.Fatal("no server version detected")
		}
		_, want := laravel.PopLock(c.Dialect(), c.ServerVersion())
		if c.Lock() != want {
			t.Fatalf("Lock() = %q for %q, want %q", c.Lock(), c.ServerVersion(), want)
		}
		p.ServerVersion = "5.5.5-10.5.0-MariaDB"
		if db.Dialect == "pgsql" {
			p.ServerVersion = "9.4"
		}
		old := queuetest.Open(t, p)
		if db.Dialect != "sqlite" && old.Lock() != "for update" {
			t.Fatalf("with version override %q: Lock() = %q, want for update", p.ServerVersion, old.Lock())
		}
		p.ServerVersion = ""
		p.ForceForUpdate = true
		if forced := queuetest.Open(t, p); db.Dialect != "sqlite" && forced.Lock() != "for update" {
			t.Fatalf("ForceForUpdate: Lock() = %q", forced.Lock())
		}
	})
}

func TestOpenFromParts(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		p := laravel.OpenParams{
			Dialect: laravel.Dialect(db.Dialect), Host: db.Host, Port: db.Port, Database: db.Name,
			Username: db.User, Password: db.Password, Schema: db.Schema,
		}
		c := queuetest.Open(t, p)
		if err := laravel.CreateSchema(context.Background(), c, laravel.SchemaParams{}); err != nil {
			t.Fatalf("create schema through a connection from parts: %v", err)
		}
	})
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	for _, p := range []laravel.OpenParams{
		{Dialect: laravel.MySQL, Host: "127.0.0.1", Port: 1, Database: "app", Username: "root"},
		{Dialect: laravel.Postgres, Host: "127.0.0.1", Port: 1, Database: "app", Username: "postgres"},
	} {
		_, err := laravel.Open(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "app") || !strings.Contains(err.Error(), "DB_HOST") {
			t.Errorf("open unreachable %s: err = %v; want one naming host, database and the settings to check", p.Dialect, err)
		}
	}
	_, err := laravel.Open(context.Background(), laravel.OpenParams{Dialect: laravel.SQLite, Database: "/nonexistent/database.sqlite", RequireSQLiteFile: true})
	if !errors.Is(err, laravel.ErrInvalid) || !strings.Contains(err.Error(), "/nonexistent/database.sqlite") || !strings.Contains(err.Error(), "DB_DATABASE") {
		t.Errorf("open a missing SQLite file: err = %v; want ErrInvalid naming the path and DB_DATABASE", err)
	}
	if _, err := laravel.Open(context.Background(), laravel.OpenParams{Dialect: "oracle"}); !errors.Is(err, laravel.ErrInvalid) {
		t.Errorf("unknown dialect: err = %v, want ErrInvalid", err)
	}
}

// TestOpenSilentServer: a server that accepts the connection and never answers is named as one
// that did not answer, with the settings to check.
func TestOpenSilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = laravel.Open(context.Background(), laravel.OpenParams{Dialect: laravel.MySQL, Host: "127.0.0.1", Port: port, Database: "app", Username: "root"})
	if err == nil || !strings.Contains(err.Error(), "no answer within 10 s") || !strings.Contains(err.Error(), "DB_HOST") {
		t.Errorf("open a silent server: err = %v; want one saying it did not answer, naming the settings", err)
	}
}

// TestMissingTableInAnotherSchema: on PostgreSQL without DB_SCHEMA, a jobs table the migrations made
// in another schema is named, with the setting to give, instead of a migration to run.
func TestMissingTableInAnotherSchema(t *testing.T) {
	t.Parallel()
	db := testenv.PostgresDatabase(t)
	if _, err := db.Open(t).Exec("create schema app; create table app.jobs (id bigint)"); err != nil {
		t.Fatal(err)
	}
	c, err := laravel.Open(context.Background(), laravel.OpenParams{Dialect: laravel.Postgres, DSN: db.DSN})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, err := laravel.NewQueue(c, laravel.QueueParams{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: 1, RetryAfter: 90})
	if !errors.Is(err, laravel.ErrMissingTable) || !strings.Contains(err.Error(), "in schema app") || !strings.Contains(err.Error(), "set DB_SCHEMA") || strings.Contains(err.Error(), "queue:table") {
		t.Fatalf("claim: %v; want the schema named and DB_SCHEMA, not a migration", err)
	}
}

func TestTablesValidate(t *testing.T) {
	t.Parallel()
	if err := laravel.DefaultTables().Validate(); err != nil {
		t.Fatalf("default tables: %v", err)
	}
	bad := laravel.DefaultTables()
	bad.FailedJobs = "failed jobs; drop table x"
	err := bad.Validate()
	if !errors.Is(err, laravel.ErrInvalid) || !strings.Contains(err.Error(), "tables.failed_jobs") {
		t.Fatalf("bad table name: err = %v; want ErrInvalid naming tables.failed_jobs", err)
	}
}

func TestMissingTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		c := queuetest.Open(t, queuetest.OpenParams(db))
		q, err := laravel.NewQueue(c, laravel.QueueParams{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = q.JobClaim(context.Background(), &laravel.JobClaimParams{Queue: "default", Now: 1, RetryAfter: 90})
		var mt *laravel.MissingTableError
		if !errors.Is(err, laravel.ErrMissingTable) || !errors.As(err, &mt) || mt.Table != c.Tables().Jobs ||
			!strings.Contains(err.Error(), "php artisan queue:table && php artisan migrate") {
			t.Fatalf("claim without a jobs table: err = %v; want ErrMissingTable naming %s and the fix", err, c.Tables().Jobs)
		}
		_, _, err = c.CacheGet(context.Background(), "x")
		if !errors.As(err, &mt) || mt.Table != c.Tables().Cache || !strings.Contains(err.Error(), "cache:table") {
			t.Fatalf("cache get without a cache table: err = %v", err)
		}
	})
}

func TestUnknownStrategy(t *testing.T) {
	t.Parallel()
	_, err := laravel.NewQueue(nil, laravel.QueueParams{Strategy: "nope"})
	if !errors.Is(err, laravel.ErrUnknownStrategy) || !strings.Contains(err.Error(), "delete-retry") {
		t.Fatalf("err = %v; want ErrUnknownStrategy listing delete-retry", err)
	}
}

func TestRegisterStrategy(t *testing.T) {
	t.Parallel()
	if !slices.Contains(laravel.Strategies(), laravel.DefaultStrategy) {
		t.Fatalf("Strategies() = %v, want %s among them", laravel.Strategies(), laravel.DefaultStrategy)
	}
	for name, fn := range map[string]laravel.StrategyFunc{
		laravel.DefaultStrategy: func(*laravel.Conn, laravel.QueueParams) (laravel.Queue, error) { return nil, nil },
		"":                      func(*laravel.Conn, laravel.QueueParams) (laravel.Queue, error) { return nil, nil },
		"no-func":               nil,
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterStrategy(%q) did not panic", name)
				}
			}()
			laravel.RegisterStrategy(name, fn)
		}()
	}
	if _, err := laravel.NewQueue(nil, laravel.QueueParams{}); !errors.Is(err, laravel.ErrInvalid) {
		t.Errorf("NewQueue without a connection: err = %v, want ErrInvalid", err)
	}
}

// TestOpenTLSParams connects to PostgreSQL with the connection's sslmode: verify-full with a CA file
// that does not exist fails, naming it, as PHP's pdo_pgsql refuses it; disable connects without TLS,
// and require with it when the server has TLS on.
func TestOpenTLSParams(t *testing.T) {
	t.Parallel()
	db := testenv.Postgres(t)
	p := laravel.OpenParams{Dialect: laravel.Postgres, Host: db.Host, Port: db.Port, Database: db.Name, Username: db.User, Password: db.Password}
	p.SSL = laravel.TLSParams{Mode: "verify-full", RootCert: "/nonexistent/ca.pem"}
	if c, err := laravel.Open(context.Background(), p); err == nil {
		c.Close()
		t.Fatal("verify-full with a missing CA file connected")
	} else if !strings.Contains(err.Error(), "/nonexistent/ca.pem") || !strings.Contains(err.Error(), "check the connection's TLS settings") {
		t.Errorf("verify-full with a missing CA file: %v; want the file and sslrootcert named", err)
	}
	sslOn := func(mode string) bool {
		t.Helper()
		p.SSL = laravel.TLSParams{Mode: mode}
		c := queuetest.Open(t, p)
		var on bool
		if err := laravel.QueryRowScan(c, "select ssl from pg_stat_ssl where pid = pg_backend_pid()", &on); err != nil {
			t.Fatal(err)
		}
		return on
	}
	if sslOn("disable") {
		t.Error("sslmode disable: the connection uses TLS")
	}
	var server string
	if err := laravel.QueryRowScan(queuetest.Open(t, p), "show ssl", &server); err != nil {
		t.Fatal(err)
	}
	if server == "on" && !sslOn("require") {
		t.Error("sslmode require: the connection does not use TLS")
	}
}

// TestOpenMySQLCA connects to MySQL or MariaDB over TLS when the connection has a CA file
// (PDO::MYSQL_ATTR_SSL_CA): a missing file is refused naming it, and a CA that did not sign the
// server's certificate (or a server without TLS) fails the connection where it succeeds without one.
func TestOpenMySQLCA(t *testing.T) {
	t.Parallel()
	db := testenv.MySQL(t)
	p := laravel.OpenParams{Dialect: laravel.MySQL, Host: db.Host, Port: db.Port, Database: db.Name, Username: db.User, Password: db.Password}
	queuetest.Open(t, p) // without a CA file
	p.SSL.MySQLCA = filepath.Join(t.TempDir(), "missing-ca.pem")
	if _, err := laravel.Open(context.Background(), p); !errors.Is(err, laravel.ErrInvalid) || !strings.Contains(err.Error(), "missing-ca.pem") || !strings.Contains(err.Error(), "MYSQL_ATTR_SSL_CA") {
		t.Errorf("a missing CA file: %v; want ErrInvalid naming the file and MYSQL_ATTR_SSL_CA", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "an unrelated CA"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.SSL.MySQLCA = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p.SSL.MySQLCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := laravel.Open(context.Background(), p); err == nil {
		c.Close()
		t.Fatal("connected over a TLS checked with an unrelated CA")
	} else if !strings.Contains(err.Error(), "check the connection's TLS settings") {
		t.Errorf("with an unrelated CA: %v; want the TLS settings named", err)
	}
}
