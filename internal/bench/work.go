package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/artisan-go/artisan-go/laravel"
)

// RowWork is the row of the real `artisan-go queue:work` command run as separate processes; with a
// --strategy or a --concurrency the row's name carries them (see WorkRowName).
const RowWork = "queue:work"

// WorkRowName names the queue:work row of a strategy at a concurrency; "" and 0 are the command's
// defaults.
func WorkRowName(strategy string, concurrency int) string {
	name := RowWork
	if strategy != "" {
		name += " --strategy " + strategy
	}
	if concurrency > 0 {
		name += fmt.Sprintf(" --concurrency %d", concurrency)
	}
	return name
}

// workRouteConfig routes the bench's jobs to the builtin no-op handler, the only thing the stock
// binary needs to run them.
const workRouteConfig = "routes:\n  - class: App\\Jobs\\Noop\n    builtin: noop\n"

// stoppedRE reads the counts from the line queue:work logs when it stops, startedRE the claim strategy
// and claim size it chose when it started.
var (
	stoppedRE = regexp.MustCompile(`msg="artisan-go worker stopped".* processed=(\d+).* lost=(\d+)`)
	startedRE = regexp.MustCompile(`msg="artisan-go worker starting".* strategy=(\S+).* concurrency=(\d+) claim_batch=(\d+)`)
)

// drainWork runs n `artisan-go queue:work database` processes of Params.WorkBinary, as a user runs
// them: the application's .env, a configuration that only routes App\Jobs\Noop to the builtin no-op
// handler, and every other setting at its default (with concurrency > 0, --concurrency; with
// Params.WorkStrategy, --strategy). Their logs go
// to files, as under a supervisor. They are stopped with SIGTERM once the table is drained; the
// executions are the jobs each process reports processed (or lost) when it stops, and the peak RSS is
// summed.
func (e *env) drainWork(n, concurrency int) drainer {
	return func(ctx context.Context, proto *protocol, ready func(), stop func() bool) (laravel.ConnStats, float64, error) {
		var stats laravel.ConnStats
		if e.p.WorkBinary == "" {
			return stats, 0, fmt.Errorf("%w: no artisan-go binary for the queue:work row: give --work-binary", ErrParams)
		}
		dir, _, err := e.appEnvDir("artisan-go-bench-work-")
		if err != nil {
			return stats, 0, err
		}
		defer os.RemoveAll(dir)
		cfg := filepath.Join(dir, "artisan-go.yaml")
		if err := os.WriteFile(cfg, []byte(workRouteConfig), 0o644); err != nil {
			return stats, 0, err
		}
		cmds := make([]*exec.Cmd, n)
		logs := make([]string, n)
		for i := range cmds {
			args := []string{"queue:work", "database", "--env-file", filepath.Join(dir, ".env"), "--config", cfg}
			if concurrency > 0 {
				args = append(args, "--concurrency", strconv.Itoa(concurrency))
			}
			if e.p.WorkStrategy != "" {
				args = append(args, "--strategy", e.p.WorkStrategy)
			}
			cmd := exec.CommandContext(ctx, e.p.WorkBinary, args...)
			// The bench's own DSN wins over the .env's parts: it may name a schema or file options. The
			// log stays at its default level and format, whatever the environment says, so that the
			// start and stop lines can be read.
			cmd.Env = append(os.Environ(), "ARTISAN_GO_DB_DSN="+e.d.DSN, "ARTISAN_GO_LOG_LEVEL=info", "ARTISAN_GO_LOG_FORMAT=text")
			logs[i] = filepath.Join(dir, fmt.Sprintf("worker-%d.log", i))
			f, err := os.Create(logs[i])
			if err != nil {
				return stats, 0, err
			}
			defer f.Close()
			cmd.Stdout, cmd.Stderr = f, f
			cmds[i] = cmd
		}
		output := func(i int) string { b, _ := os.ReadFile(logs[i]); return string(b) }
		ready()
		rss, err := runProcesses(ctx, cmds, output, stop)
		for i := range cmds {
			if m := startedRE.FindStringSubmatch(output(i)); m != nil && proto.note == "" {
				proto.note = fmt.Sprintf("strategy %s, concurrency %s, claim batch %s", m[1], m[2], m[3])
			}
			m := stoppedRE.FindStringSubmatch(output(i))
			if m == nil {
				continue // stopped while it started, before it claimed anything
			}
			processed, _ := strconv.Atoi(m[1])
			lost, _ := strconv.Atoi(m[2])
			proto.external.Add(int64(processed + lost))
		}
		return stats, rss, err
	}
}
