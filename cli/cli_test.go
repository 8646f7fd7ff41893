package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoUnknownCommand: an unknown command exits 1 naming it, as artisan does.
func TestDoUnknownCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"no:such"}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if !strings.Contains(errb.String(), `Command "no:such" is not defined`) {
		t.Fatalf("stderr %q does not name the command", errb.String())
	}
}

// TestConsoleOptions: Symfony Console's options that supervisor programs pass to artisan are taken:
// -q leaves standard output empty, -n answers questions with their default, --env picks .env.<env>
// and the environment, and --ansi, -v and --no-interaction do not stop a command.
func TestConsoleOptions(t *testing.T) {
	t.Parallel()
	args, o := splitConsoleOptions([]string{"database", "-q", "--sleep=3", "-vvv", "-n", "--ansi", "--env=staging", "--", "-q"})
	if strings.Join(args, " ") != "database --sleep=3 -- -q" || !o.quiet || o.verbosity != 3 || !o.noInteraction || o.env != "staging" {
		t.Fatalf("splitConsoleOptions = %q %+v", args, o)
	}
	// Short options together, as Symfony reads them: -nv is -n (the verbosity is read from how the
	// token starts), -qv is -q, -vvq is -vv.
	for _, tc := range []struct {
		arg  string
		want consoleOptions
	}{{"-nv", consoleOptions{noInteraction: true}}, {"-qv", consoleOptions{quiet: true}}, {"-vvq", consoleOptions{verbosity: 2}}} {
		if args, o := splitConsoleOptions([]string{tc.arg}); len(args) != 0 || o != tc.want {
			t.Errorf("%s: %q %+v, want %+v", tc.arg, args, o, tc.want)
		}
	}
	for env, want := range map[string]consoleOptions{"-1": {quiet: true}, "2": {verbosity: 2}, "7": {}, "": {}} {
		if got := (consoleOptions{}).withShellVerbosity(env); got != want {
			t.Errorf("SHELL_VERBOSITY=%q: %+v, want %+v", env, got, want)
		}
	}
	if got := (consoleOptions{verbosity: 1}).withShellVerbosity("-1"); got.quiet {
		t.Error("SHELL_VERBOSITY=-1 won over -v")
	}
	if _, o := splitConsoleOptions([]string{"--ansi", "--no-ansi", "--silent"}); o.ansi == nil || !*o.ansi || !o.quiet {
		t.Errorf("--ansi --no-ansi --silent: %+v, want colours (--ansi wins) and quiet", o)
	}
	if args, _ := splitConsoleOptions([]string{"--verbose=2"}); len(args) != 1 {
		t.Errorf("--verbose=2 taken, as Symfony does not (the option takes no value)")
	}
	_, env := newSQLiteApp(t)
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:failed", "--env-file", env, "-qv", "--no-ansi", "-nv"}, nil, &out, &errb); code != 0 || out.Len() != 0 {
		t.Fatalf("queue:failed -qv -nv: status %d, stdout %q\n%s", code, out.String(), errb.String())
	}
	if code := Do(context.Background(), []string{"queue:failed", "--env-file", env, "-q", "--no-ansi", "-v"}, nil, &out, &errb); code != 0 || out.Len() != 0 {
		t.Fatalf("queue:failed -q: status %d, stdout %q\n%s", code, out.String(), errb.String())
	}
	// --env=production is the environment whatever APP_ENV says: queue:clear asks, and -n takes the
	// default answer (no).
	out.Reset()
	if code := Do(context.Background(), []string{"queue:clear", "--env-file", env, "--env=production", "-n"}, strings.NewReader("yes\n"), &out, &errb); !strings.Contains(out.String(), "Command Canceled!") {
		t.Fatalf("queue:clear -n --env=production: status %d\n%s%s", code, out.String(), errb.String())
	}
	// --env=broken reads .env.broken, which points at no database file.
	if err := os.WriteFile(env+".broken", []byte("DB_CONNECTION=sqlite\nDB_DATABASE=/nonexistent/db.sqlite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := Do(context.Background(), []string{"queue:failed", "--env-file", env, "--env=broken"}, nil, &out, &errb); code == 0 || !strings.Contains(errb.String(), "/nonexistent/db.sqlite") {
		t.Fatalf("queue:failed --env=broken: status %d, want the .env.broken file read\n%s", code, errb.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestDoListsCommands(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := Do(context.Background(), nil, nil, &out, &out); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	for name := range commands {
		if !strings.Contains(out.String(), name) {
			t.Errorf("usage does not list %s", name)
		}
	}
}

// TestHelpCommand: `help queue:work` prints that command's help, as artisan's help does, with its
// defaults and the console options every command takes; an unknown command is refused.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"help", "queue:work"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help := out.String() + errb.String()
	for _, want := range []string{"Usage: artisan-go queue:work", "-sleep", "[default: 3]", "[default: 256]", "--no-interaction"} {
		if !strings.Contains(help, want) {
			t.Errorf("help queue:work does not say %q:\n%s", want, help)
		}
	}
	out.Reset()
	errb.Reset()
	if code := Do(context.Background(), []string{"help", "queue:nope"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), `"queue:nope" is not defined`) {
		t.Errorf("help queue:nope: exit %d, %q", code, errb.String())
	}
}

// TestAppEnvPicksEnvFile reads .env.<APP_ENV> when the process environment sets APP_ENV and that file
// exists, as Laravel's LoadEnvironmentVariables does, also when --env names a file that does not
// exist; a false APP_ENV picks none. (Not parallel: it sets the process environment.)
func TestAppEnvPicksEnvFile(t *testing.T) {
	_, env := newSQLiteApp(t)
	if err := os.WriteFile(env+".staging", []byte("DB_CONNECTION=sqlite\nDB_DATABASE=/nonexistent/staging.sqlite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Do(context.Background(), append([]string{"queue:failed", "--env-file", env}, args...), nil, &out, &errb)
		return code, errb.String()
	}
	t.Setenv("APP_ENV", "staging")
	for _, args := range [][]string{nil, {"--env=production"}} {
		if code, errOut := run(args...); code == 0 || !strings.Contains(errOut, "/nonexistent/staging.sqlite") {
			t.Errorf("APP_ENV=staging %v: status %d, want .env.staging read\n%s", args, code, errOut)
		}
	}
	t.Setenv("APP_ENV", "false")
	if code, errOut := run(); code != 0 {
		t.Errorf("APP_ENV=false: status %d, want .env read\n%s", code, errOut)
	}
}

// TestEnvFileFromWorkingDirectory: without --env-file the working directory's .env is read, as artisan
// reads the application's; with none, a connection error says that no .env was read.
func TestEnvFileFromWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "from-dotenv.sqlite")
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DB_CONNECTION=sqlite\nDB_DATABASE="+missing+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:failed"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), missing) {
		t.Fatalf("exit %d, stderr %q: want the database of the working directory's .env", code, errb.String())
	}
	if err := os.Remove(filepath.Join(dir, ".env")); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	t.Setenv("ARTISAN_GO_DB_DRIVER", "sqlite")
	t.Setenv("ARTISAN_GO_DB_DATABASE", missing)
	if code := Do(context.Background(), []string{"queue:failed"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no .env file was read") {
		t.Fatalf("exit %d, stderr %q: want it to say no .env was read", code, errb.String())
	}
}

// TestAppDirWithoutEnvFile: with the settings in the environment and no .env file, a working
// directory that holds artisan is the application's: its storage/framework/down puts the worker in
// maintenance mode, as PHP's worker run there. Before, maintenance mode went unseen without a .env.
func TestAppDirWithoutEnvFile(t *testing.T) {
	_, env := newSQLiteApp(t, "welcome")
	dir := filepath.Dir(env)
	if err := os.Remove(env); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "storage", "framework"), 0o755); err != nil {
		t.Fatal(err)
	}
	down := filepath.Join(dir, "storage", "framework", "down")
	for _, f := range []string{filepath.Join(dir, "artisan"), down} {
		if err := os.WriteFile(f, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("DB_CONNECTION", "sqlite")
	t.Setenv("CACHE_DRIVER", "database")
	t.Setenv("DB_DATABASE", filepath.Join(dir, "database.sqlite"))
	run := func() string {
		var out, errb bytes.Buffer
		if code := Do(context.Background(), []string{"queue:work", "--queue=emails", "--stop-when-empty", "--sleep=0"}, nil, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return errb.String()
	}
	if log := run(); !strings.Contains(log, "maintenance mode; stopping") {
		t.Fatalf("with %s: want maintenance mode\n%s", down, log)
	}
	if err := os.Remove(filepath.Join(dir, "artisan")); err != nil {
		t.Fatal(err)
	}
	if log := run(); strings.Contains(log, "maintenance mode") {
		t.Fatalf("in a directory without artisan: want no application directory\n%s", log)
	}
	// A database that cannot be opened from the application's directory without .env: the hint says
	// so, rather than to run from the application's directory.
	if err := os.WriteFile(filepath.Join(dir, "artisan"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DB_DATABASE", filepath.Join(dir, "missing.sqlite"))
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"queue:work", "--once"}, nil, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "the application's directory "+dir+" has no .env file") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}

// TestUnknownOptionAsSymfony: an unknown option is refused in Symfony's words, as artisan refuses it,
// and so is an option without the value it needs.
func TestUnknownOptionAsSymfony(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"queue:work", "--bogus"}, `The "--bogus" option does not exist.`},
		{[]string{"queue:work", "--bogus=1"}, `The "--bogus" option does not exist.`},
		{[]string{"queue:failed", "-x"}, `The "-x" option does not exist.`},
		{[]string{"queue:doctor", "--nope"}, `The "--nope" option does not exist.`},
		// A value starting with "-" is no value to Symfony's parser: an option that needs one says so.
		{[]string{"queue:push", `App\Jobs\X`, "--delay", "-5"}, `The "--delay" option requires a value (write --delay=VALUE for one starting with "-").`},
	} {
		var out, errb bytes.Buffer
		code := Do(context.Background(), c.args, nil, &out, &errb)
		if code == 0 || strings.TrimSpace(errb.String()) != c.want {
			t.Errorf("%v: exit %d, stderr %q; want non-zero and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestVersion: --version prints the command's name and version, as artisan --version does its own.
func TestVersion(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := Do(context.Background(), []string{"--version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "artisan-go ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
