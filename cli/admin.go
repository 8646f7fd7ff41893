package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// adminCommands are Laravel's queue management commands, registered from this table.
var adminCommands = []adminCommand{
	{
		name: "queue:failed", summary: "List all of the failed queue jobs, as php artisan queue:failed",
		usage: "[--json]", since: [2]int{5, 0}, optionSince: map[string][2]int{"json": {13, 10}},
		flags: func(fs *flag.FlagSet) { fs.Bool("json", false, "output the failed jobs as JSON (Laravel 13.10+)") },
		run:   runQueueFailed,
	},
	{
		name: "queue:retry", summary: "Retry a failed queue job, as php artisan queue:retry",
		usage: "[ID...|all] [--queue=NAME] [--range=FROM-TO...]", since: [2]int{5, 0},
		optionSince: map[string][2]int{"range": {7, 22}, "queue": {8, 37}},
		flags: func(fs *flag.FlagSet) {
			fs.String("queue", "", "retry all of the failed jobs for the specified queue")
			fs.Var(&listFlag{}, "range", "range of job ids (numeric) to be retried, e.g. 1-5; repeatable")
		},
		arguments: manyArgs("id"),
		run:       runQueueRetry,
	},
	{
		name: "queue:retry-batch", summary: "Retry the failed jobs for a batch, as php artisan queue:retry-batch",
		usage: "ID (several from Laravel 11.24)", since: [2]int{8, 0}, arguments: func(v payload.Version) []string {
			if v.AtLeast(11, 24) {
				return []string{"id*"}
			}
			return []string{"id"}
		},
		run: runQueueRetryBatch,
	},
	{
		name: "queue:forget", summary: "Delete a failed queue job, as php artisan queue:forget",
		usage: "ID", since: [2]int{5, 0}, arguments: oneArg("id"),
		run: runQueueForget,
	},
	{
		name: "queue:flush", summary: "Flush all of the failed queue jobs, as php artisan queue:flush",
		usage: "[--hours=N]", since: [2]int{5, 0}, optionSince: map[string][2]int{"hours": {9, 0}},
		flags: func(fs *flag.FlagSet) {
			fs.String("hours", "", "delete only jobs that failed more than this many hours ago (Laravel 9+)")
		},
		run: runQueueFlush,
	},
	{
		name: "queue:prune-failed", summary: "Prune stale entries from the failed jobs table, as php artisan queue:prune-failed",
		usage: "[--hours=24]", since: [2]int{8, 48},
		flags: func(fs *flag.FlagSet) { fs.String("hours", "24", "the number of hours to retain failed jobs data") },
		run:   runQueuePruneFailed,
	},
	{
		name: "queue:prune-batches", summary: "Prune stale entries from the batches database, as php artisan queue:prune-batches",
		usage: "[--hours=24] [--unfinished=N] [--cancelled=N]", since: [2]int{8, 21},
		optionSince: map[string][2]int{"unfinished": {8, 36}, "cancelled": {9, 41}},
		flags: func(fs *flag.FlagSet) {
			fs.String("hours", "24", "the number of hours to retain batch data")
			fs.String("unfinished", "", "the number of hours to retain unfinished batch data")
			fs.String("cancelled", "", "the number of hours to retain cancelled batch data (Laravel 9.41+)")
		},
		run: runQueuePruneBatches,
	},
	{
		name: "queue:clear", summary: "Delete all of the jobs from the specified queue, as php artisan queue:clear",
		usage: "[connection] [--queue=NAME] [--force]", since: [2]int{8, 4},
		flags: func(fs *flag.FlagSet) {
			fs.String("queue", "", "the name of the queue to clear (default: the connection's queue, DB_QUEUE)")
			fs.Bool("force", false, "force the operation to run when in production")
		},
		arguments: oneArg("connection"),
		run:       runQueueClear,
	},
	{
		name: "queue:monitor", summary: "Monitor the size of the specified queues, as php artisan queue:monitor; exit 1 when one is at --max or above",
		usage: "QUEUES [--max=1000] [--json]", since: [2]int{8, 53}, optionSince: map[string][2]int{"json": {12, 16}},
		flags: func(fs *flag.FlagSet) {
			fs.String("max", "1000", "the number of jobs on a queue from which it is reported (ALERT) and the exit status is 1")
			fs.Bool("json", false, "output the queue sizes as JSON (Laravel 12.16+)")
		},
		arguments: oneArg("queues"),
		run:       runQueueMonitor,
	},
	{
		name: "queue:restart", summary: "Restart queue worker daemons after their current job, as php artisan queue:restart",
		since: [2]int{5, 0}, run: runQueueRestart,
	},
	{
		name: "queue:pause", summary: "Pause job processing for a specific queue, as php artisan queue:pause",
		usage: "[connection:]queue | --all", since: [2]int{12, 40}, optionSince: map[string][2]int{"all": {13, 25}},
		flags: pauseFlags, arguments: oneArg("queue"),
		run: func(ctx context.Context, a *adminRun) int { return runQueuePause(ctx, a, true) },
	},
	{
		name: "queue:resume", aliases: []string{"queue:continue"},
		summary: "Resume job processing for a paused queue, as php artisan queue:resume",
		usage:   "[connection:]queue | --all", since: [2]int{12, 40}, optionSince: map[string][2]int{"all": {13, 25}},
		flags: pauseFlags, arguments: oneArg("queue"),
		run: func(ctx context.Context, a *adminRun) int { return runQueuePause(ctx, a, false) },
	},
}

func init() {
	for _, c := range adminCommands {
		registerAdmin(c)
	}
}

// adminCommand describes one of Laravel's queue management commands: the Laravel version that
// introduced it and the versions that introduced each of its options, so that a command or option the
// configured laravel_version does not have is refused as artisan refuses it.
type adminCommand struct {
	name, summary, usage string
	// aliases are other names of the command (queue:continue for queue:resume).
	aliases []string
	// since is the Laravel version that has the command, e.g. {8, 53} for queue:monitor.
	since [2]int
	// optionSince maps an option (without dashes) to the version that added it.
	optionSince map[string][2]int
	// flags declares the command's options on fs.
	flags func(fs *flag.FlagSet)
	// arguments names the command's arguments in a Laravel version, "*" marking one that takes any
	// number of values (nil: none), so that one too many is refused as Symfony's console refuses it.
	arguments func(v payload.Version) []string
	// run runs the command once its arguments are parsed and the configuration is loaded.
	run func(ctx context.Context, a *adminRun) int
}

// adminRun is one run of an admin command: its parsed arguments, configuration, console and, once
// conn is called, its database.
type adminRun struct {
	cfg     *config.Config
	version payload.Version
	args    []string
	set     map[string]bool // options given on the command line
	con     *console
	stdin   io.Reader
	stderr  io.Writer
	name    string
	fs      *flag.FlagSet
	db      *laravel.Conn
}

// registerAdmin registers an admin command and its aliases.
func registerAdmin(c adminCommand) {
	for _, name := range append([]string{c.name}, c.aliases...) {
		register(command{name: name, summary: c.summary, run: func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
			return c.exec(ctx, name, args, stdin, stdout, stderr)
		}})
	}
}

func (c adminCommand) exec(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	tf := newTableFlags(fs)
	if c.flags != nil {
		c.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: artisan-go %s %s\n", name, c.usage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, symfonyOptionsHelp)
	}
	var positional []string
	if err := parseWithPositional(fs, args, func(s string) { positional = append(positional, s) }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	cfg, err := loadConfig(ctx, *tf.envFile, *tf.configFile, nil)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go %s: %v\n", name, err)
		return 1
	}
	v, err := payload.ParseVersion(cfg.LaravelVersion)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go %s: laravel_version: %v\n", name, err)
		return 1
	}
	if !v.AtLeast(c.since[0], c.since[1]) {
		fmt.Fprintf(stderr, "artisan-go %s: Command %q is not defined in Laravel %s (laravel_version); it came in %d.%d.\n",
			name, name, cfg.LaravelVersion, c.since[0], c.since[1])
		return 1
	}
	if err := c.checkArgumentCount(name, v, positional); err != nil {
		fmt.Fprintf(stderr, "artisan-go %s: %v\n", name, err)
		return 1
	}
	a := &adminRun{cfg: cfg, version: v, args: positional, set: map[string]bool{}, stdin: stdin, stderr: stderr, name: name, fs: fs,
		con: newConsole(cfg.LaravelVersion, stdout, stderr, decorated(ctx, stdout, v), terminalWidth(os.LookupEnv, os.Stdin))}
	var refused []string
	fs.Visit(func(f *flag.Flag) {
		a.set[f.Name] = true
		if s, ok := c.optionSince[f.Name]; ok && !v.AtLeast(s[0], s[1]) {
			refused = append(refused, fmt.Sprintf("The \"--%s\" option does not exist in Laravel %s (laravel_version); it came in %d.%d.", f.Name, cfg.LaravelVersion, s[0], s[1]))
		}
	})
	if len(refused) > 0 {
		fmt.Fprintf(stderr, "artisan-go %s: %s\n", name, strings.Join(refused, " "))
		return 1
	}
	defer func() {
		if a.db != nil {
			a.db.Close()
		}
	}()
	return c.run(ctx, a)
}

// decorated says whether a command's output on stdout is coloured, as Symfony decides: --ansi or
// --no-ansi, else whether the terminal takes colours.
func decorated(ctx context.Context, stdout io.Writer, v payload.Version) bool {
	if on := consoleOptionsOf(ctx).ansi; on != nil {
		return *on
	}
	return colorSupport(os.LookupEnv, isTerminal(stdout), v)
}

// oneArg declares a command's single argument; manyArgs one that takes any number of values.
func oneArg(name string) func(payload.Version) []string {
	return func(payload.Version) []string { return []string{name} }
}

func manyArgs(name string) func(payload.Version) []string {
	return func(payload.Version) []string { return []string{name + "*"} }
}

// checkArgumentCount refuses more arguments than the command takes, with the message of Symfony's
// console, before anything is read or changed: PHP runs no command given one argument too many.
func (c adminCommand) checkArgumentCount(name string, v payload.Version, given []string) error {
	var names []string
	if c.arguments != nil {
		names = c.arguments(v)
	}
	if len(names) > 0 && strings.HasSuffix(names[len(names)-1], "*") || len(given) <= len(names) {
		return nil
	}
	if len(names) == 0 {
		return fmt.Errorf("No arguments expected for %q command, got %q.", name, given[0])
	}
	return fmt.Errorf("Too many arguments to %q command, expected arguments \"%s\".", name, strings.Join(names, `" "`))
}

// conn opens the configured database once.
func (a *adminRun) conn(ctx context.Context) (*laravel.Conn, error) {
	if a.db != nil {
		return a.db, nil
	}
	db, err := openConn(ctx, a.cfg)
	if err != nil {
		return nil, err
	}
	a.db = db
	return db, nil
}

// failure reports an error that stops the command as one line on stderr and returns exit status 1.
func (a *adminRun) failure(err error) int {
	if a.db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if fix := a.db.DeniedFix(ctx, err); fix != "" {
			err = fmt.Errorf("%w (the database user lacks a privilege this command needs; as an administrator, run: %s)", err, fix)
		}
	}
	fmt.Fprintf(a.stderr, "artisan-go %s: %v\n", a.name, err)
	return 1
}

// at reports whether the configured Laravel version is major.minor or newer.
func (a *adminRun) at(major, minor int) bool { return a.version.AtLeast(major, minor) }

// option returns the value of an option, its default when not given.
func (a *adminRun) option(name string) string { return a.fs.Lookup(name).Value.String() }

// exitInterrupted is the exit status of a command stopped by SIGINT between two steps, as a shell
// reports a process ended by it.
const exitInterrupted = 130

// interrupted reports where SIGINT stopped a long command and returns exitInterrupted.
func (a *adminRun) interrupted(format string, args ...any) int {
	fmt.Fprintf(a.stderr, "artisan-go %s: interrupted after %s\n", a.name, fmt.Sprintf(format, args...))
	return exitInterrupted
}
