// Package cli is the artisan-go command line: queue:work, queue:push, queue:doctor, queue:migrate-index,
// queue:bench, payload:decode and demo.
//
// It is a package rather than a main so that an application can build its own artisan-go binary with its
// Go handlers in it: register them on handlers.Default() and call Main. Each subcommand lives in its own
// file, registers itself in init, parses its flags, wires the packages together and runs. Do is the
// testable entry point.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand; it panics on a duplicate name, as registries here fail fast.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("artisan-go: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// Main runs the command line with the process's arguments and standard streams and returns the exit
// status for os.Exit. SIGTERM and SIGINT cancel the context the command runs with, which makes
// queue:work stop claiming and finish its running jobs, as php artisan queue:work does.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return Do(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Do runs the subcommand named by args[0] and returns the process exit status.
func Do(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "list" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "artisan-go: unknown command %q; run `artisan-go list` to see the commands\n", args[0])
		return 2
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "artisan-go: a Go worker for Laravel's database queue")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: artisan-go <command> [options]")
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
