package cli

import (
	"context"
	"os"
	"regexp"
	"strings"
)

// consoleOptions are the options Symfony Console gives every artisan command, which supervisor
// programs and deploy scripts pass to PHP's queue:work and the other commands: artisan-go takes them
// too, rather than refusing to start.
type consoleOptions struct {
	quiet         bool   // -q, --quiet: nothing on standard output
	verbosity     int    // -v, -vv, -vvv, --verbose: 1 to 3
	noInteraction bool   // -n, --no-interaction: questions take their default answer
	env           string // --env: the application environment, and .env.<env> when that file exists
	ansi          *bool  // --ansi (true), --no-ansi (false): colours forced on or off; nil decides by the terminal
}

// symfonyOptionsHelp closes every command's --help: the console options it takes besides its own.
const symfonyOptionsHelp = `Console options every command takes, as artisan's do:
  -q, --quiet          nothing on standard output (--silent too)
  -v, -vv, -vvv        more output; -vvv logs at debug level (SHELL_VERBOSITY too)
  -n, --no-interaction questions take their default answer
  --ansi, --no-ansi    colours on or off, whatever the terminal
  --env=ENV            the application environment, and .env.ENV beside the .env file when it exists`

type consoleOptionsKey struct{}

// combinedShorts is a token of Symfony Console's flag-only short options written together (-nv).
var combinedShorts = regexp.MustCompile(`^-[qvn]{2,}$`)

// splitConsoleOptions takes Symfony Console's options out of a command's arguments (up to a "--"
// that ends the options).
func splitConsoleOptions(args []string) ([]string, consoleOptions) {
	var o consoleOptions
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...), o
		case a == "-q" || a == "--quiet":
			o.quiet = true
		case a == "-v" || a == "--verbose":
			o.verbosity = max(o.verbosity, 1)
		case a == "-vv":
			o.verbosity = max(o.verbosity, 2)
		case a == "-vvv":
			o.verbosity = 3
		case combinedShorts.MatchString(a):
			// Symfony's short options together (-nv, -qv): each is taken, and its Application reads
			// -q, -n and the verbosity from how the token starts (ArgvInput::hasParameterOption).
			o.quiet = o.quiet || strings.HasPrefix(a, "-q")
			o.noInteraction = o.noInteraction || strings.HasPrefix(a, "-n")
			switch {
			case strings.HasPrefix(a, "-vvv"):
				o.verbosity = 3
			case strings.HasPrefix(a, "-vv"):
				o.verbosity = max(o.verbosity, 2)
			case strings.HasPrefix(a, "-v"):
				o.verbosity = max(o.verbosity, 1)
			}
		case a == "-n" || a == "--no-interaction":
			o.noInteraction = true
		case a == "--ansi" || a == "--no-ansi":
			on := a == "--ansi" || o.ansi != nil && *o.ansi // with both, --ansi wins, as in Symfony
			o.ansi = &on
		case a == "--silent": // Symfony 7.2+ (Laravel 11 on): nothing at all on standard output
			o.quiet = true
		case strings.HasPrefix(a, "--env="):
			o.env = strings.TrimPrefix(a, "--env=")
		case a == "--env" && i+1 < len(args):
			i++
			o.env = args[i]
		default:
			out = append(out, a)
		}
	}
	return out, o
}

// withConsoleOptions returns ctx carrying o.
// withShellVerbosity applies Symfony's SHELL_VERBOSITY variable when no -q or -v option was given:
// -1 (and 7.2's -2) is quiet, 1 to 3 verbose to debug.
func (o consoleOptions) withShellVerbosity(v string) consoleOptions {
	if o.quiet || o.verbosity > 0 {
		return o
	}
	switch n := phpInt(strings.TrimSpace(v)); {
	case n == -1 || n == -2:
		o.quiet = true
	case n >= 1 && n <= 3:
		o.verbosity = n
	}
	return o
}

func withConsoleOptions(ctx context.Context, o consoleOptions) context.Context {
	return context.WithValue(ctx, consoleOptionsKey{}, o)
}

// consoleOptionsOf returns the options ctx carries (the zero value when none).
func consoleOptionsOf(ctx context.Context) consoleOptions {
	o, _ := ctx.Value(consoleOptionsKey{}).(consoleOptions)
	return o
}

// environmentFile is the .env file Laravel reads for --env=<env>: .env.<env> beside envFile when it
// exists (LoadEnvironmentVariables::checkForSpecificEnvironmentFile), else envFile.
func environmentFile(envFile, env string) string {
	if env == "" || envFile == "" {
		return envFile
	}
	if _, err := os.Stat(envFile + "." + env); err == nil {
		return envFile + "." + env
	}
	return envFile
}
