package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// ConsoleParams says how queue:work's per-job lines look: those of the application's Laravel version.
type ConsoleParams struct {
	// Version is the application's Laravel version.
	Version payload.Version
	// Location is the time zone of the times printed (the app's).
	Location *time.Location
	// Verbose is -v: Laravel 9.41+ adds the job id (12.20+ also the connection and queue, 13.3+ the
	// memory after the run time).
	Verbose bool
	// Decorated colours the lines as Symfony Console does on a terminal.
	Decorated bool
	// Width is the terminal width the dotted lines of Laravel 9.21+ fill (Symfony's Terminal width).
	Width int
}

// The line shapes of queue:work's output, by Laravel version (WorkCommand::writeOutput).
const (
	consoleBracket   = iota // 5.4–5.5: "[date] Processing: Name"
	consoleBracketID        // 5.6–9.20: "[date][id] Processing: Name"
	consoleOneLine          // 9.21–9.40: "  date Name ....... 1.23ms DONE", written as the job ends
	consoleTwoLines         // 9.41+: a RUNNING line as the job starts, then the DONE or FAIL line
)

// consoleShape returns the shape of a version's lines.
func consoleShape(v payload.Version) int {
	switch {
	case !v.AtLeast(5, 6):
		return consoleBracket
	case !v.AtLeast(9, 21):
		return consoleBracketID
	case !v.AtLeast(9, 41):
		return consoleOneLine
	}
	return consoleTwoLines
}

// consoleHeader is what queue:work prints before its first job from Laravel 9.21 on (the components'
// info line), empty when the version prints none: from 9.41 only when stty works, that is when the
// worker's standard input is a terminal. queues is the --queue value as given.
func consoleHeader(v payload.Version, queues string, stdinTerminal, decorated bool) string {
	if consoleShape(v) < consoleOneLine || consoleShape(v) == consoleTwoLines && !stdinTerminal {
		return ""
	}
	noun := "queue"
	if strings.Count(queues, ",") > 0 {
		noun = "queues"
	}
	label := " INFO "
	if decorated {
		label = "\x1b[37;44m INFO \x1b[39;49m"
	}
	list := "[" + queues + "]"
	if decorated {
		list = "\x1b[1m" + list + "\x1b[22m"
	}
	return "\n  " + label + " Processing jobs from the " + list + " " + noun + ".  \n\n"
}

// ConsoleEvents returns a worker.Params.Events that prints each job's lines as PHP's `queue:work`
// prints them for the version in p: Laravel 5.4–9.20's "[date][id] Processing: Name" lines (no id
// before 5.6), 9.21+'s dotted lines with the run time and DONE or FAIL. Each line is written whole,
// so that lines of jobs run at once do not mix; the one-line shape of 9.21–9.40, which PHP starts as
// the job starts, is written as the job ends.
func ConsoleEvents(w io.Writer, p ConsoleParams) func(worker.RunEvent) {
	if p.Location == nil {
		p.Location = time.UTC
	}
	var mu sync.Mutex
	return func(e worker.RunEvent) {
		line := consoleLine(e, p)
		if line == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, line)
	}
}

// consoleLine renders the line an event prints, newline included, or "" for none.
func consoleLine(e worker.RunEvent, p ConsoleParams) string {
	if e.Status == worker.EventQueuePaused || e.Status == worker.EventQueueResumed { // 13.26+
		word := paint(p.Decorated, "green;bold", "RESUMED")
		if e.Status == worker.EventQueuePaused {
			word = paint(p.Decorated, "yellow;bold", "PAUSED")
		}
		return "  " + paint(p.Decorated, "gray", e.Time.In(p.Location).Format(time.DateTime)) + " Queue " + paint(p.Decorated, "blue", e.Queue) + " " + word + "\n"
	}
	shape := consoleShape(p.Version)
	if shape <= consoleBracketID {
		var status, style string
		switch e.Status {
		case worker.EventStarting:
			status, style = "Processing:", "comment"
		case worker.EventSuccess:
			status, style = "Processed: ", "info"
		case worker.EventFailed:
			status, style = "Failed:    ", "error"
		default: // a release after an exception prints nothing before 9.21
			return ""
		}
		head := "[" + e.Time.In(p.Location).Format(time.DateTime) + "]"
		if shape == consoleBracketID {
			head += "[" + strconv.FormatInt(e.ID, 10) + "]"
		}
		return paint(p.Decorated, style, head+" "+status) + " " + e.Job + "\n"
	}
	if shape == consoleOneLine && e.Status == worker.EventStarting {
		return ""
	}
	at := e.Time
	if shape == consoleOneLine {
		at = e.Time.Add(-e.Duration) // the line starts with the time the job started
	}
	var b strings.Builder
	b.WriteString("  " + paint(p.Decorated, "gray", at.In(p.Location).Format(time.DateTime)) + " " + e.Job)
	extra := 0 // the width the verbose details take
	memory := ""
	if p.Verbose && shape == consoleTwoLines {
		id := strconv.FormatInt(e.ID, 10)
		if p.Version.AtLeast(12, 20) {
			b.WriteString(" " + paint(p.Decorated, "gray", id) + " " + paint(p.Decorated, "blue", e.Connection) + " " + paint(p.Decorated, "blue", e.Queue))
			extra = utf8.RuneCountInString(id) + utf8.RuneCountInString(e.Connection) + utf8.RuneCountInString(e.Queue) + 2
		} else {
			b.WriteString(" " + paint(p.Decorated, "gray", id))
			extra = utf8.RuneCountInString(id) + 1
		}
		if p.Version.AtLeast(13, 3) && e.Status != worker.EventStarting {
			memory = memoryMB()
			extra += utf8.RuneCountInString(memory) + 1
		}
	}
	name := utf8.RuneCountInString(e.Job)
	if e.Status == worker.EventStarting {
		b.WriteString(" " + dots(p, p.Width-name-extra-33) + " " + paint(p.Decorated, "yellow;bold", "RUNNING") + "\n")
		return b.String()
	}
	run := runTime(e.Duration, p.Version.AtLeastPatch(10, 13, 1))
	b.WriteString(" " + dots(p, p.Width-name-extra-utf8.RuneCountInString(run)-31))
	if memory != "" {
		run += " " + memory
	}
	b.WriteString(" " + paint(p.Decorated, "gray", run))
	switch e.Status {
	case worker.EventSuccess:
		b.WriteString(" " + paint(p.Decorated, "green;bold", "DONE"))
	case worker.EventReleased:
		b.WriteString(" " + paint(p.Decorated, "yellow;bold", "FAIL"))
	default:
		b.WriteString(" " + paint(p.Decorated, "red;bold", "FAIL"))
	}
	return b.String() + "\n"
}

// dots is n gray dots (none when n < 0), each coloured on its own as PHP writes them.
func dots(p ConsoleParams, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(paint(p.Decorated, "gray", "."), n)
}

// consoleStyles are the ANSI codes Symfony Console sets and resets for the styles the lines use.
var consoleStyles = map[string][2]string{
	"comment":     {"33", "39"},
	"info":        {"32", "39"},
	"error":       {"37;41", "39;49"},
	"gray":        {"90", "39"},
	"blue":        {"34", "39"},
	"yellow;bold": {"33;1", "39;22"},
	"green;bold":  {"32;1", "39;22"},
	"red;bold":    {"31;1", "39;22"},
	"label-info":  {"37;44", "39;49"},
	"label-warn":  {"30;43", "39;49"},
	"red":         {"31", "39"},
}

// paint wraps s in a style's codes when the output is decorated.
func paint(decorated bool, style, s string) string {
	if !decorated || s == "" {
		return s
	}
	c := consoleStyles[style]
	return "\x1b[" + c[0] + "m" + s + "\x1b[" + c[1] + "m"
}

// runTime is how PHP prints a job's run time: milliseconds as number_format($ms, 2) ("1,234.57ms"),
// and from Laravel 10.13 on, above a second, CarbonInterval::milliseconds($ms)->cascade()
// ->forHumans(short: true): whole units down to seconds ("1m 5s", "1w 1d").
func runTime(d time.Duration, humans bool) string {
	if humans && d > time.Second {
		return forHumansShort(int64(d / time.Second))
	}
	hundredths := (d.Nanoseconds() + 5_000) / 10_000 // of a millisecond, half up
	return groupThousands(hundredths/100) + fmt.Sprintf(".%02dms", hundredths%100)
}

// taskRunTime is the run time the Task component of Laravel v prints: number_format's two decimals
// in 9.21, none from 9.22 (whole milliseconds, half up), and from 11.0 the runTimeForHumans of
// queue:work's lines.
func taskRunTime(d time.Duration, v payload.Version) string {
	if v.AtLeast(9, 22) && !v.AtLeast(11, 0) {
		return groupThousands((d.Nanoseconds()+500_000)/1_000_000) + "ms"
	}
	return runTime(d, v.AtLeast(11, 0))
}

// groupThousands writes n with a comma between groups of three digits, as number_format does.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// forHumansShort is Carbon's short forHumans of a cascaded interval of secs seconds: every unit that
// is not zero, largest first (a month is four weeks, a year twelve months).
func forHumansShort(secs int64) string {
	units := []struct {
		size         int64
		one, several string
	}{
		{12 * 4 * 7 * 86400, "yr", "yrs"}, {4 * 7 * 86400, "mo", "mos"}, {7 * 86400, "w", "w"},
		{86400, "d", "d"}, {3600, "h", "h"}, {60, "m", "m"}, {1, "s", "s"},
	}
	var parts []string
	for _, u := range units {
		n := secs / u.size
		secs %= u.size
		switch {
		case n == 1:
			parts = append(parts, "1"+u.one)
		case n > 1:
			parts = append(parts, strconv.FormatInt(n, 10)+u.several)
		}
	}
	return strings.Join(parts, " ")
}

// memoryMB is Laravel 13.3+'s verbose memory figure, round(memory_get_usage(true) / 1024 / 1024, 1)
// followed by "MB", of the memory the Go runtime holds from the system.
func memoryMB() string {
	return strconv.FormatFloat(math.Round(worker.MemoryMB()*10)/10, 'f', -1, 64) + "MB"
}

// terminalWidth is Symfony's Terminal::getWidth: COLUMNS when it is set (as PHP's (int) reads it),
// else the width of the terminal on standard input (what stty reports), else 80.
func terminalWidth(getenv func(string) (string, bool), stdin *os.File) int {
	if v, ok := getenv("COLUMNS"); ok {
		return phpInt(strings.TrimSpace(v))
	}
	if stdin != nil && term.IsTerminal(int(stdin.Fd())) {
		if w, _, err := term.GetSize(int(stdin.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// phpInt is PHP's (int) of a string: its leading digits (with a sign), 0 when there are none.
func phpInt(s string) int {
	end := 0
	if end < len(s) && (s[0] == '-' || s[0] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// isTerminal reports whether w is a terminal (not a file, a pipe or /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colorTerm is the TERM values Symfony Console colours (after chalk's supports-color).
var colorTerm = regexp.MustCompile(`^((screen|xterm|vt100|vt220|putty|rxvt|ansi|cygwin|linux).*)|(.*-256(color)?(-bce)?)$`)

// colorSupport is Symfony Console's StreamOutput::hasColorSupport for the Symfony of the Laravel
// version. 5.4 (Laravel 7–10): no colours under a non-empty NO_COLOR or off a terminal (unless
// MSYSTEM says MinGW), colours with COLORTERM, ANSICON, ConEmuANSI=ON or Hyper, none for TERM=dumb,
// else colours for the TERM values known to take them. 7.2 (Laravel 11 on) also colours whenever
// FORCE_COLOR is not empty. 3.4 and 4.4 (Laravel 5.4–6): none when NO_COLOR is set at all, else
// colours on any terminal.
func colorSupport(getenv func(string) (string, bool), terminal bool, v payload.Version) bool {
	if !v.AtLeast(7, 0) {
		_, noColor := getenv("NO_COLOR")
		program, _ := getenv("TERM_PROGRAM")
		return !noColor && (program == "Hyper" || terminal)
	}
	if v, _ := getenv("NO_COLOR"); v != "" {
		return false
	}
	if force, _ := getenv("FORCE_COLOR"); force != "" && v.AtLeast(11, 0) {
		return true
	}
	if msys, _ := getenv("MSYSTEM"); !terminal && strings.ToUpper(msys) != "MINGW32" && strings.ToUpper(msys) != "MINGW64" {
		return false
	}
	_, colorterm := getenv("COLORTERM")
	_, ansicon := getenv("ANSICON")
	program, _ := getenv("TERM_PROGRAM")
	conemu, _ := getenv("ConEmuANSI")
	if program == "Hyper" || colorterm || ansicon || conemu == "ON" {
		return true
	}
	t, _ := getenv("TERM")
	return t != "dumb" && colorTerm.MatchString(t)
}

// outputTimezone is the zone of the times queue:work prints: Laravel 9.49+'s queue.output_timezone
// when it is set and not the app's zone (WorkCommand::now), else the app's.
func outputTimezone(cfg *config.Config) string {
	v, err := payload.ParseVersion(cfg.LaravelVersion)
	if tz := cfg.Log.OutputTimezone; tz != "" && tz != cfg.App.Timezone && err == nil && v.AtLeast(9, 49) {
		return tz
	}
	return cfg.App.Timezone
}

// startConsole prints queue:work's header for the app's Laravel version on w, when that version
// prints one, and returns the events that print each job's lines there. terminal is the standard
// output the lines end up on, which decides the colours as Symfony decides them: --ansi or
// --no-ansi, else colorSupport.
func startConsole(w io.Writer, terminal io.Writer, cfg *config.Config, opts consoleOptions) func(worker.RunEvent) {
	v, err := payload.ParseVersion(cfg.LaravelVersion)
	if err != nil {
		v = payload.Version{Major: 8, Minor: 83}
	}
	loc, err := time.LoadLocation(outputTimezone(cfg))
	if err != nil {
		loc = time.UTC
	}
	decorated := colorSupport(os.LookupEnv, isTerminal(terminal), v)
	if opts.ansi != nil {
		decorated = *opts.ansi
	}
	stdinTerminal := term.IsTerminal(int(os.Stdin.Fd()))
	// PHP's handle() returns before its header with --once in maintenance mode (the file driver's).
	_, downErr := os.Stat(cfg.Worker.MaintenanceFile)
	down := cfg.Worker.MaintenanceFile != "" && downErr == nil && !cfg.Worker.Force
	if h := consoleHeader(v, strings.Join(cfg.Worker.Queues, ","), stdinTerminal, decorated); h != "" && !(cfg.Worker.Once && down) {
		_, _ = io.WriteString(w, h)
	}
	return ConsoleEvents(w, ConsoleParams{Version: v, Location: loc, Verbose: opts.verbosity > 0, Decorated: decorated,
		Width: terminalWidth(os.LookupEnv, os.Stdin)})
}
