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

// drainPHP runs n `php artisan queue:work database` processes on the table until it is drained, then
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
		storage, env, err := e.appEnvDir("artisan-go-bench-php-")
		if err != nil {
			return stats, 0, err
		}
		defer os.RemoveAll(storage)
		sleep := strconv.FormatFloat(e.p.Sleep.Seconds(), 'f', -1, 64)
		cmds := make([]*exec.Cmd, n)
		outs := make([]*bytes.Buffer, n)
		for i := range cmds {
			cmd := exec.CommandContext(ctx, e.p.PHPBinary, artisan, "queue:work", "database", "--sleep="+sleep, "--tries=1", "--memory=512")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), env...)
			outs[i] = &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			cmds[i] = cmd
		}
		ready()
		rss, err := runProcesses(ctx, cmds, func(i int) string { return outs[i].String() }, stop)
		return stats, rss, err
	}
}

// appEnvDir makes a temporary directory holding a .env file of phpEnv's settings, for PHP's
// application and artisan-go's --env-file alike, and returns it with the settings.
func (e *env) appEnvDir(prefix string) (dir string, env []string, err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if env, err = e.phpEnv(dir); err == nil {
		err = os.WriteFile(filepath.Join(dir, ".env"), []byte(strings.Join(env, "\n")+"\n"), 0o644)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, env, nil
}
