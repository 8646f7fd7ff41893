package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// artisan returns the Laravel application's directory (Params.PHPApp) and its artisan script.
func (e *env) artisan() (app, artisan string, err error) {
	if e.p.PHPApp == "" {
		return "", "", fmt.Errorf("%w: --php-app is empty: point it at the Laravel application (testdata/laravel)", ErrParams)
	}
	if app, err = filepath.Abs(e.p.PHPApp); err != nil {
		return "", "", err
	}
	artisan = filepath.Join(app, "artisan")
	if _, err := os.Stat(artisan); err != nil {
		return "", "", fmt.Errorf("%w: %s: %v; point --php-app at the Laravel application (testdata/laravel)", ErrParams, artisan, err)
	}
	return app, artisan, nil
}

// drainPHP runs n `php artisan queue:work database` processes on the table until it is drained, then
// stops them with SIGTERM as a supervisor would. Their peak RSS is summed.
func (e *env) drainPHP(n int) drainer {
	return func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (laravel.ConnStats, float64, error) {
		var stats laravel.ConnStats
		app, artisan, err := e.artisan()
		if err != nil {
			return stats, 0, err
		}
		storage, env, err := e.appEnvDir("artisan-go-bench-php-")
		if err != nil {
			return stats, 0, err
		}
		defer os.RemoveAll(storage)
		sleep := strconv.FormatFloat(e.p.Sleep.Seconds(), 'f', -1, 64)
		// At a steady rate each PHP worker's Noop jobs note when they start (see App\Jobs\Noop), so
		// that the row's latency is measured as the Go rows' is.
		starts := ""
		if e.p.Rate > 0 {
			starts = filepath.Join(storage, "starts")
			if err := os.Mkdir(starts, 0o755); err != nil {
				return stats, 0, err
			}
			env = append(env, "BENCH_STARTS_DIR="+starts)
		}
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
		if err == nil && starts != "" {
			err = readPHPStarts(starts, proto)
		}
		return stats, rss, err
	}
}

// readPHPStarts records on proto the starts that PHP workers' Noop jobs wrote to dir, a file per
// process of lines "id unix-seconds".
func readPHPStarts(dir string, proto *protocol) error {
	files, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			var id int64
			var at float64
			if _, err := fmt.Sscanf(line, "%d %f", &id, &at); err != nil {
				continue
			}
			proto.recordAt(id, int64(at*1e9)-proto.start.UnixNano(), i)
		}
	}
	return nil
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

// startPHPProducers dispatches the row's jobs from Params.PHPProducers processes of the Laravel
// application (php artisan interop:bench-produce), each at its share of Params.Rate, as application
// code dispatches them one by one. Each process prints a job's id and when its insert returned, which
// become the producer's record, on the protocol's clock.
func (e *env) startPHPProducers(ctx context.Context, proto *protocol) *producer {
	pr := &producer{enqueued: map[int64]int64{}, done: make(chan struct{})}
	n := e.p.PHPProducers
	go func() {
		defer close(pr.done)
		app, err := filepath.Abs(e.p.PHPApp)
		if err != nil {
			pr.err = err
			return
		}
		storage, env, err := e.appEnvDir("artisan-go-bench-produce-")
		if err != nil {
			pr.err = err
			return
		}
		defer os.RemoveAll(storage)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			count := e.p.Jobs / n
			if i < e.p.Jobs%n {
				count++
			}
			cmd := exec.CommandContext(ctx, e.p.PHPBinary, filepath.Join(app, "artisan"), "interop:bench-produce",
				strconv.Itoa(count), strconv.FormatFloat(e.p.Rate/float64(n), 'f', -1, 64), "--first="+strconv.Itoa(i*e.p.Jobs))
			cmd.Dir = app
			cmd.Env = append(os.Environ(), env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				errs[i] = err
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					var id int64
					var at float64
					if _, err := fmt.Sscanf(sc.Text(), "%d %f", &id, &at); err != nil {
						continue
					}
					ns := int64(at*1e9) - proto.start.UnixNano()
					pr.mu.Lock()
					pr.ids = append(pr.ids, id)
					pr.enqueued[id] = ns
					pr.mu.Unlock()
				}
				if err := cmd.Wait(); err != nil {
					errs[i] = fmt.Errorf("php interop:bench-produce: %v: %s", err, lastLines(stderr.String(), 5))
				}
			}()
		}
		wg.Wait()
		pr.err = errors.Join(errs...)
		pr.mu.Lock()
		slices.Sort(pr.ids)
		pr.mu.Unlock()
	}()
	return pr
}
