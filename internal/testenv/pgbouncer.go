//go:build linux

package testenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PgBouncer is a pgbouncer process in front of a PostgreSQL server.
type PgBouncer struct {
	Port int
	Mode string // pool_mode: session, transaction or statement

	bin  string
	ini  string
	attr syscall.SysProcAttr
	cmd  *exec.Cmd
}

// StartPgBouncer starts pgbouncer on a free port in front of the PostgreSQL server at host:port, in
// the pool mode given, with every database name passed through to the server (as user, with no
// password) and a pool of poolSize server connections per database. It is killed when the test ends.
func StartPgBouncer(t testing.TB, host string, port int, user, mode string, poolSize int) *PgBouncer {
	t.Helper()
	b := newPgBouncer(t, host, port, user, mode, poolSize, false)
	b.Start(t)
	t.Cleanup(b.kill)
	return b
}

var shared struct {
	mu sync.Mutex
	m  map[string]*PgBouncer
}

// PostgresPooled creates an empty database on the PostgreSQL server the tests use and returns it as
// reached through a pgbouncer of the test binary in the pool mode given (one per mode, started on
// first use, pool of 20 server connections), as an application behind PgBouncer reaches its
// database. Tables go in the database's public schema: a pooler refuses search_path at connect. The
// database is dropped when the test ends.
func PostgresPooled(t testing.TB, mode string) Database {
	t.Helper()
	name := Name("agb")
	// The pooler keeps server connections to the database open.
	u := postgresCreate(t, "database", name, `drop database if exists "%s" with (force)`)
	host, port := splitHostPort(u.Host, 5432)
	shared.mu.Lock()
	b := shared.m[mode]
	if b == nil {
		// Shared by the binary's tests, so it dies with the binary rather than with one test. A
		// test that fails to start it ends here (runtime.Goexit): the lock is not held past it.
		defer shared.mu.Unlock()
		b = newPgBouncer(t, host, port, u.User.Username(), mode, 20, true)
		b.Start(t)
		if shared.m == nil {
			shared.m = map[string]*PgBouncer{}
		}
		shared.m[mode] = b
	} else {
		shared.mu.Unlock()
	}
	return Database{
		Dialect: "pgsql", Driver: "pgx", Host: "127.0.0.1", Port: b.Port, Name: name, User: u.User.Username(), Pooler: mode,
		DSN: fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", url.User(u.User.Username()).String(), b.Port, name),
	}
}

// newPgBouncer prepares pgbouncer's command and configuration, to run as the postgres system user
// when run as root (it refuses root); with orphan, SIGKILL reaches it when the test binary exits.
func newPgBouncer(t testing.TB, host string, port int, dbUser, mode string, poolSize int, orphan bool) *PgBouncer {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
		if _, err := os.Stat(bin); err != nil {
			Missing(t, "pgbouncer not found: apt-get install pgbouncer")
		}
	}
	b := &PgBouncer{Mode: mode, bin: bin, attr: syscall.SysProcAttr{Setpgid: true}}
	if orphan {
		b.attr.Pdeathsig = syscall.SIGKILL
	}
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			Missing(t, "no postgres system user to run pgbouncer as (it refuses root): apt-get install postgresql")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		b.attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	b.ini = fmt.Sprintf(`[databases]
* = host=%s port=%d user=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = any
pool_mode = %s
default_pool_size = %d
max_client_conn = 2000
max_user_connections = 30
server_login_retry = 1
`, host, port, dbUser, b.Port, mode, poolSize)
	return b
}

// Start starts the process, again after Kill, and waits until it listens.
func (b *PgBouncer) Start(t testing.TB) {
	t.Helper()
	// In /tmp itself: the test binary's own temporary directory may be closed to other users, and
	// pgbouncer reads its configuration once, at start, as the postgres user.
	dir, err := os.MkdirTemp("/tmp", "artisan-go-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(path, []byte(b.ini), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(b.bin, path)
	attr := b.attr
	cmd.SysProcAttr = &attr
	logf, err := os.CreateTemp("", "artisan-go-pgbouncer-log-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(logf.Name())
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	b.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		// No goroutine waits for it (one would outlive the tests of a shared pgbouncer): its exit
		// is polled.
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == cmd.Process.Pid {
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("pgbouncer exited at start (status %d):\n%s", ws.ExitStatus(), out)
		}
		time.Sleep(20 * time.Millisecond)
		if time.Now().After(deadline) {
			b.kill()
			out, _ := os.ReadFile(logf.Name())
			t.Fatalf("pgbouncer did not listen on %d within 20 s:\n%s", b.Port, out)
		}
	}
}

// Kill stops the process with SIGKILL, as a crash would, and reaps it.
func (b *PgBouncer) Kill(t testing.TB) { b.kill() }

// kill stops the process group with SIGKILL and reaps the process, if it runs.
func (b *PgBouncer) kill() {
	if b.cmd == nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.cmd.Wait()
	b.cmd = nil
}
