//go:build unix

// The database servers start as processes of their own group, under the mysql or postgres user
// when run as root: unix only, as the fault suite is.

package faults

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// Server is a database server process owned by one test.
type Server struct {
	Dialect string // "mysql" or "pgsql"
	Port    int
	dir     string
	args    []string
	cred    *syscall.Credential
	log     string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// pgBin is where Debian installs PostgreSQL 15's server programs.
const pgBin = "/usr/lib/postgresql/15/bin"

// StartMariaDB creates a data directory with mariadb-install-db and starts mariadbd on a free port.
// The server is killed when the test ends.
func StartMariaDB(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		testenv.Missing(t, "mariadb-install-db not found: apt-get install mariadb-server")
	}
	if os.Getuid() != 0 {
		testenv.Missing(t, "starting a MariaDB of the test's own needs root here (it runs as --user=root)")
	}
	dir := tempDir(t, "")
	data := filepath.Join(dir, "data")
	// A temporary directory of its own: installs running at once in the shared /tmp remove each
	// other's temporary tables ("Unknown table 'mysql.tmp_user_sys'").
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--tmpdir="+tmp, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	s := &Server{Dialect: "mysql", Port: testenv.FreePort(t), dir: dir, log: filepath.Join(dir, "server.log")}
	s.args = []string{"/usr/sbin/mariadbd", "--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--port=" + strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1", "--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
		"--user=root", "--skip-log-bin", "--skip-name-resolve", "--innodb-buffer-pool-size=32M",
		// A killed server process keeps what the OS has: commits survive a kill as with 1.
		"--innodb-flush-log-at-trx-commit=2"}
	s.Start(t)
	t.Cleanup(func() { s.Kill(t) })
	return s
}

// StartPostgres runs initdb and starts postgres on a free port as the postgres system user (the
// server refuses to run as root). The server is killed when the test ends.
func StartPostgres(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		testenv.Missing(t, "%s/initdb not found: apt-get install postgresql-15", pgBin)
	}
	var cred *syscall.Credential
	owner := ""
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			testenv.Missing(t, "no postgres system user to run a PostgreSQL of the test's own: apt-get install postgresql")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		owner = u.Uid + ":" + u.Gid
	}
	dir := tempDir(t, owner)
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(pgBin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-N")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s := &Server{Dialect: "pgsql", Port: testenv.FreePort(t), dir: dir, cred: cred, log: filepath.Join(dir, "server.log")}
	s.args = []string{filepath.Join(pgBin, "postgres"), "-D", data, "-p", strconv.Itoa(s.Port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"}
	s.Start(t)
	t.Cleanup(func() { s.Kill(t) })
	return s
}

// Database describes the server's default database for the tests' helpers.
func (s *Server) Database() testenv.Database {
	if s.Dialect == "mysql" {
		return testenv.Database{Dialect: "mysql", Driver: "mysql", Host: "127.0.0.1", Port: s.Port, Name: "test", User: "root",
			DSN: fmt.Sprintf("root@tcp(127.0.0.1:%d)/test?parseTime=false", s.Port)}
	}
	return testenv.Database{Dialect: "pgsql", Driver: "pgx", Host: "127.0.0.1", Port: s.Port, Name: "postgres", User: "postgres",
		Schema: "public", DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)}
}

// Start starts the server process and waits until it accepts connections (and, for MariaDB, has the
// test database).
func (s *Server) Start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that Kill reaches every process of the server at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", s.args[0], err)
	}
	logf.Close()
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	if err := s.waitReady(60 * time.Second); err != nil {
		out, _ := os.ReadFile(s.log)
		t.Fatalf("%s did not start: %v\n%s", s.args[0], err, out)
	}
}

// waitReady polls until a query succeeds.
func (s *Server) waitReady(limit time.Duration) error {
	db := s.Database()
	driver, dsn := db.Driver, db.DSN
	if s.Dialect == "mysql" {
		dsn = fmt.Sprintf("root@tcp(127.0.0.1:%d)/", s.Port)
	}
	deadline := time.Now().Add(limit)
	for {
		err := func() error {
			c, err := sql.Open(driver, dsn)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if s.Dialect == "mysql" {
				_, err = c.ExecContext(ctx, "create database if not exists test")
				return err
			}
			return c.PingContext(ctx)
		}()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill kills every process of the server with SIGKILL and waits for the leader to exit.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// tempDir makes a directory removed when the test ends; with owner ("uid:gid") it is given to that
// user, and made reachable, so a server running as that user can write there.
func tempDir(t testing.TB, owner string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "artisan-go-faults-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if owner != "" {
		var uid, gid int
		fmt.Sscanf(owner, "%d:%d", &uid, &gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
