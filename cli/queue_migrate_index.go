package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/artisan-go/artisan-go/laravel"
)

func runQueueMigrateIndex(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queue:migrate-index", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tf := newTableFlags(fs)
	strategy := fs.String("strategy", "", "also add the columns this claim strategy uses (delete-mark: delete_mark; optimistic: version)")
	dryRun := fs.Bool("dry-run", false, "print the statements without running them")
	rollback := fs.Bool("rollback", false, "remove what the migration added beyond Laravel's own table (strategy columns and their indexes)")
	legacy := fs.Bool("legacy-index", false, "with --rollback: also restore Laravel 5.4's (queue, reserved_at) index in place of (queue)")
	force := fs.Bool("force", false, "with --rollback: drop the strategy columns (delete_mark, version) although workers may use them; stop those workers first")
	if err := parseAsSymfony(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	_, conn, err := tf.open(ctx, fs)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:migrate-index: %v\n", err)
		return 2
	}
	defer conn.Close()
	prefix := ""
	if *dryRun {
		prefix = "-- dry run, not executed: "
	}
	plan, err := laravel.MigrateIndex(ctx, conn, laravel.MigrateParams{
		Strategy: *strategy, DryRun: *dryRun, Rollback: *rollback, LegacyIndex: *legacy, Force: *force,
		Statement: func(sql string) { fmt.Fprintf(stdout, "%s%s;\n", prefix, sql) },
		Waiting: func(sql string, try int, err error) {
			fmt.Fprintf(stderr, "artisan-go queue:migrate-index: a transaction open beside it holds the table (%v); the workers run meanwhile, trying again (%d)\n", err, try)
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:migrate-index: %v\n", err)
		return 1
	}
	if len(plan) == 0 {
		fmt.Fprintf(stdout, "%s: nothing to do\n", conn.Tables().Jobs)
	}
	return 0
}
