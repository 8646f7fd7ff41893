// Package cli is the artisan-go command line: queue:work, queue:push, queue:doctor, queue:migrate-index,
// queue:bench, payload:decode and demo, and Laravel's queue management commands (queue:failed,
// queue:retry, queue:restart, ..., listed in admin.go's table).
//
// It is a package rather than a main so that an application can build its own artisan-go binary with its
// Go handlers in it: register them on handlers.Default() and call Main. Each subcommand lives in its own
// file, is listed in the commands table, parses its flags, wires the packages together and runs. Do is the
// testable entry point.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are the subcommands by name, from this table.
var commands = index([]command{
	{"queue:work", "Work jobs from Laravel's database queue, as php artisan queue:work does", runQueueWork},
	{"queue:push", "Queue a Laravel job (a PHP class and its properties) for PHP workers", runQueuePush},
	{"queue:doctor", "Check the jobs table's indexes and columns and the worker settings; exit 1 when something needs fixing", runQueueDoctor},
	{"queue:migrate-index", "Migrate the jobs table's indexes (and a strategy's columns) in place, online, printing each statement", runQueueMigrateIndex},
	{"queue:bench", queueBenchSummary, runQueueBench},
	{"payload:decode", "Print a job payload (FILE or stdin) as one JSON object", runPayloadDecode},
	{"demo", "Work real Laravel 8.83 payloads from an embedded SQLite queue and print what happened", runDemo},
})

// index returns the commands by name; it panics on a duplicate name, as registries here fail fast.
func index(table []command) map[string]command {
	m := make(map[string]command, len(table))
	for _, c := range table {
		if _, dup := m[c.name]; dup {
			panic("artisan-go: command listed twice: " + c.name)
		}
		m[c.name] = c
	}
	return m
}

// register adds a subcommand kept in a file of its own; it panics on a duplicate name.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("artisan-go: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// Main runs the command line with the process's arguments and standard streams and returns the exit
// status for os.Exit. SIGTERM, SIGINT and SIGQUIT cancel the context the command runs with, which
// makes queue:work stop claiming and finish its running jobs, as php artisan queue:work does (SIGQUIT
// from Laravel 9.24, SIGINT from 12.22; before, PHP's worker dies at once, leaving its job reserved).
// A second one stops it at once, its running jobs handed back.
func Main() int {
	stopSigs = watchedStopSignals()
	ctx, stop := signal.NotifyContext(context.WithValue(context.Background(), stopSignalsKey{}, true), stopSigs...)
	defer stop()
	// A standard output or error nobody reads any more (`queue:work | head`, a log shipper that died)
	// must not kill the worker with its jobs reserved, as the Go runtime's default SIGPIPE would: PHP
	// ignores SIGPIPE. Caught, not ignored, so that commands the worker runs get the default back.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return Do(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// stopSigs are the signals that stop queue:work (see watchedStopSignals), read once by Main.
var stopSigs []os.Signal

// watchedStopSignals returns SIGTERM, and SIGINT and SIGQUIT unless the process started with them
// ignored, as a shell starts a background job (`artisan-go queue:work &` in a script) so that the
// terminal's Ctrl-C does not reach it: PHP's worker keeps them ignored, and so does this one, where
// watching them would take them up again.
func watchedStopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// stopSignalsKey marks the context of Main, whose signals stop queue:work: a second one stops it at
// once (see stopSignals). Do called from a program of its own leaves the process's signals alone.
type stopSignalsKey struct{}

// Do runs the subcommand named by args[0] and returns the process exit status.
func Do(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) >= 2 && args[0] == "help" && !strings.HasPrefix(args[1], "-") {
		// artisan help queue:work: that command's own help.
		return Do(ctx, []string{args[1], "--help"}, stdin, stdout, stderr)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "list" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-V" {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "artisan-go: Command %q is not defined; run `artisan-go list` to see the commands\n", args[0])
		return 1
	}
	if args[0] == "demo" || args[0] == "queue:bench" {
		return c.run(ctx, args[1:], stdin, stdout, stderr) // artisan-go's own, with -v and --quiet of their own
	}
	rest, opts := splitConsoleOptions(args[1:])
	opts = opts.withShellVerbosity(os.Getenv("SHELL_VERBOSITY"))
	if opts.quiet {
		stdout = io.Discard
	}
	if opts.noInteraction || opts.quiet {
		stdin = nil // not interactive (Symfony makes -q so too): a question takes its default answer
	}
	return c.run(withConsoleOptions(ctx, opts), rest, stdin, stdout, stderr)
}

// versionLine is what --version prints: the module's version and, for a build from a checkout, its
// commit, as artisan --version names the framework's.
func versionLine() string {
	line := "artisan-go"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return line
	}
	version := info.Main.Version
	for _, s := range info.Deps {
		if s.Path == "github.com/artisan-go/artisan-go" { // a binary of its own that imports this module
			version = s.Version
		}
	}
	if version != "" {
		line += " " + version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			line += " (" + s.Value[:12] + ")"
		}
	}
	return line
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "artisan-go: a Go worker for Laravel's database queue")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: artisan-go <command> [options]    (artisan-go --version prints its version)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-22s %s\n", n, commands[n].summary)
	}
}
