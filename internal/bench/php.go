package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/artisan-go/artisan-go/laravel"
)

// phpEnv returns the environment that points the Laravel application at the bench's tables: the
// database, the database queue and cache, a storage directory of its own and a fresh APP_KEY.
func (e *env) phpEnv(storage string) ([]string, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, err
	}
	env := []string{
		"APP_NAME=Laravel", "APP_ENV=production", "APP_DEBUG=false", "APP_KEY=base64:" + base64.StdEncoding.EncodeToString(key[:]),
		"APP_STORAGE=" + storage, "QUEUE_CONNECTION=database", "CACHE_DRIVER=database", "CACHE_PREFIX=bench_cache",
		"LOG_CHANNEL=single", "DB_QUEUE_TABLE=" + e.admin.Tables().Jobs, "DB_CONNECTION=" + string(e.d.Dialect),
	}
	switch e.d.Dialect {
	case laravel.MySQL:
		cfg, err := mysql.ParseDSN(e.d.DSN)
		if err != nil {
			return nil, err
		}
		host, port, _ := strings.Cut(cfg.Addr, ":")
		env = append(env, "DB_HOST="+host, "DB_PORT="+port, "DB_DATABASE="+cfg.DBName, "DB_USERNAME="+cfg.User, "DB_PASSWORD="+cfg.Passwd)
	case laravel.Postgres:
		cfg, err := pgx.ParseConfig(e.d.DSN)
		if err != nil {
			return nil, err
		}
		env = append(env, "DB_HOST="+cfg.Host, "DB_PORT="+strconv.Itoa(int(cfg.Port)), "DB_DATABASE="+cfg.Database, "DB_USERNAME="+cfg.User, "DB_PASSWORD="+cfg.Password)
	case laravel.SQLite:
		abs, err := filepath.Abs(e.d.DSN)
		if err != nil {
			return nil, err
		}
		env = append(env, "DB_DATABASE="+abs)
	}
	return env, nil
}

// drainPHP runs n `php artisan queue:work database` processes on the table until it is empty, then
// stops them with SIGTERM as a supervisor would. Their peak RSS is summed.
func (e *env) drainPHP(n int) drainer {
	return func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (laravel.ConnStats, float64, error) {
		var stats laravel.ConnStats
		if e.p.PHPApp == "" {
			return stats, 0, fmt.Errorf("%w: --php-app is empty: point it at the Laravel application (testdata/laravel)", ErrParams)
		}
		app, err := filepath.Abs(e.p.PHPApp)
		if err != nil {
			return stats, 0, err
		}
		artisan := filepath.Join(app, "artisan")
		if _, err := os.Stat(artisan); err != nil {
			return stats, 0, fmt.Errorf("%w: %s: %v; point --php-app at the Laravel application (testdata/laravel)", ErrParams, artisan, err)
		}
		storage, err := os.MkdirTemp("", "artisan-go-bench-php-")
		if err != nil {
			return stats, 0, err
		}
		defer os.RemoveAll(storage)
		env, err := e.phpEnv(storage)
		if err != nil {
			return stats, 0, err
		}
		if err := os.WriteFile(filepath.Join(storage, ".env"), []byte(strings.Join(env, "\n")+"\n"), 0o644); err != nil {
			return stats, 0, err
		}
		sleep := strconv.FormatFloat(e.p.Sleep.Seconds(), 'f', -1, 64)
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		ready()
		for i := range cmds {
			cmd := exec.CommandContext(ctx, e.p.PHPBinary, artisan, "queue:work", "database", "--sleep="+sleep, "--tries=1", "--memory=512")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), env...)
			outs[i] = &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.WaitDelay = 30 * time.Second
			if err := cmd.Start(); err != nil {
				return stats, 0, fmt.Errorf("start %s queue:work: %w", e.p.PHPBinary, err)
			}
			cmds[i] = cmd
		}
		var wg sync.WaitGroup
		exited := make([]error, n)
		for i, cmd := range cmds {
			wg.Add(1)
			go func() { defer wg.Done(); exited[i] = cmd.Wait() }()
		}
		allExited := make(chan struct{})
		go func() { wg.Wait(); close(allExited) }()
		waitUntil(func() bool {
			select {
			case <-allExited:
				return true // every worker died: nothing will drain the table
			default:
				return stop()
			}
		})
		// Each process's own peak, read before it ends: the wait status's maxrss would also count the
		// bench process's resident set, which Linux carries into a child's maxrss across exec.
		var rss float64
		for _, cmd := range cmds {
			rss += processPeakRSS(strconv.Itoa(cmd.Process.Pid))
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		wg.Wait()
		for i, cmd := range cmds {
			if exited[i] != nil && !cmd.ProcessState.Exited() {
				continue // ended by the signal
			}
			if exited[i] != nil {
				return stats, rss, fmt.Errorf("php queue:work: %v: %s", exited[i], lastLines(outs[i].String(), 5))
			}
		}
		return stats, rss, nil
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
