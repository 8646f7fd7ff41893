package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// consoleReference runs cli/testdata/console_reference.php: PHP's number_format and Carbon's
// forHumans of run times, and Symfony Console's rendering of markup with colours.
func consoleReference(t *testing.T, ms []float64, tags []string) (numberFormat, forHumans, decorated []string) {
	t.Helper()
	r := consoleReferenceAll(t, ms, tags)
	return r.NumberFormat, r.ForHumans, r.Decorated
}

// phpConsole is what testdata/console_reference.php prints.
type phpConsole struct {
	NumberFormat []string `json:"number_format"`
	WholeMS      []string `json:"whole_ms"`
	ForHumans    []string `json:"for_humans"`
	Decorated    []string `json:"decorated"`
}

// consoleReferenceAll runs testdata/console_reference.php.
func consoleReferenceAll(t *testing.T, ms []float64, tags []string) phpConsole {
	t.Helper()
	php, err := exec.LookPath("php")
	if err != nil {
		testenv.Missing(t, "php is not installed (run .ci/services)")
	}
	for _, lib := range []string{"/usr/share/php/Carbon/autoload.php", "/usr/share/php/Symfony/Component/Console/autoload.php"} {
		if _, err := os.Stat(lib); err != nil {
			testenv.Missing(t, "%s is not installed: apt-get install php-laravel-framework (or run .ci/services)", lib)
		}
	}
	in, _ := json.Marshal(map[string]any{"ms": ms, "tags": tags})
	b, err := exec.Command(php, filepath.Join("testdata", "console_reference.php"), string(in)).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	var out phpConsole
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("php printed %s: %v", b, err)
	}
	return out
}

// TestConsoleRunTimeAsPHP prints run times as PHP's number_format (halves rounded up, as PHP rounds
// 1.005 to 1.01) and, above a second, as Carbon's short forHumans of the cascaded interval.
func TestConsoleRunTimeAsPHP(t *testing.T) {
	t.Parallel()
	durations := []time.Duration{0, 4_999, 5_000, 1_005_000, 2_675_000, 12_345_000, 999_994_999, 999_995_000, time.Second,
		1_000_100_000, 1_999_999_000, 59_999_900_000, time.Minute, 61_234_500_000, 3_723_456_700_000, 86_401_500_000,
		8 * 24 * time.Hour, 29 * 24 * time.Hour, 400 * 24 * time.Hour, 2 * 336 * 24 * time.Hour * 12}
	ms := make([]float64, len(durations))
	for i, d := range durations {
		ms[i] = float64(d.Nanoseconds()) / 1e6
	}
	ref := consoleReferenceAll(t, ms, nil)
	numberFormat, forHumans := ref.NumberFormat, ref.ForHumans
	for i, d := range durations {
		// A Task's run time (queue:retry's lines): whole milliseconds from 9.22 to 10.x.
		for v, want := range map[payload.Version]string{{Major: 9, Minor: 21}: numberFormat[i], {Major: 10, Minor: 48}: ref.WholeMS[i]} {
			if got := taskRunTime(d, v); got != want {
				t.Errorf("%v, task of %d.%d: %q, PHP %q", d, v.Major, v.Minor, got, want)
			}
		}
		if got := runTime(d, false); got != numberFormat[i] {
			t.Errorf("%v before 10.13: %q, PHP %q", d, got, numberFormat[i])
		}
		want := numberFormat[i]
		if d > time.Second {
			want = forHumans[i]
		}
		if got := runTime(d, true); got != want {
			t.Errorf("%v from 10.13: %q, PHP %q", d, got, want)
		}
	}
}

// TestConsoleStylesAsSymfony colours each style as Symfony Console renders the markup Laravel's
// WorkCommand writes.
func TestConsoleStylesAsSymfony(t *testing.T) {
	t.Parallel()
	markup := map[string]string{
		"comment": "<comment>%s</comment>", "info": "<info>%s</info>", "error": "<error>%s</error>",
		"gray": "<fg=gray>%s</>", "blue": "<fg=blue>%s</>", "yellow;bold": "<fg=yellow;options=bold>%s</>",
		"green;bold": "<fg=green;options=bold>%s</>", "red;bold": "<fg=red;options=bold>%s</>",
		// The components' labels (Termwind writes their classes as Symfony styles) and 8.83 monitor's ALERT.
		"label-info": "<fg=white;bg=blue>%s</>", "label-warn": "<fg=black;bg=yellow>%s</>", "red": "<fg=red>%s</>",
	}
	var styles, tags []string
	for style := range consoleStyles {
		styles = append(styles, style)
		tags = append(tags, strings.Replace(markup[style], "%s", "[2026-11-28 09:00:00] Processing:", 1))
	}
	_, _, decorated := consoleReference(t, nil, tags)
	for i, style := range styles {
		if got := paint(true, style, "[2026-11-28 09:00:00] Processing:"); got != decorated[i] {
			t.Errorf("%s: %q, Symfony %q", style, got, decorated[i])
		}
	}
}

// TestConsoleLines renders each event as the WorkCommand of each version writes it.
func TestConsoleLines(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	at := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	ev := func(status string, d time.Duration) worker.RunEvent {
		return worker.RunEvent{Status: status, ID: 42, Connection: "database", Queue: "emails", Job: `App\Jobs\SendInvoice`,
			Duration: d, Time: at}
	}
	v := func(s string) payload.Version {
		x, err := payload.ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		version string
		verbose bool
		e       worker.RunEvent
		want    string
	}{
		{"5.5", false, ev(worker.EventStarting, 0), `[2026-11-28 10:30:00] Processing: App\Jobs\SendInvoice`},
		{"5.5", false, ev(worker.EventSuccess, time.Second), `[2026-11-28 10:30:00] Processed:  App\Jobs\SendInvoice`},
		{"8.83", false, ev(worker.EventStarting, 0), `[2026-11-28 10:30:00][42] Processing: App\Jobs\SendInvoice`},
		{"8.83", false, ev(worker.EventSuccess, time.Second), `[2026-11-28 10:30:00][42] Processed:  App\Jobs\SendInvoice`},
		{"8.83", false, ev(worker.EventFailed, time.Second), `[2026-11-28 10:30:00][42] Failed:     App\Jobs\SendInvoice`},
		{"8.83", false, ev(worker.EventReleased, time.Second), ""},
		{"9.20", true, ev(worker.EventSuccess, time.Second), `[2026-11-28 10:30:00][42] Processed:  App\Jobs\SendInvoice`},
		// 9.21–9.40: one line, begun at the start time, 79 columns on 80.
		{"9.21", false, ev(worker.EventStarting, 0), ""},
		{"9.40", true, ev(worker.EventSuccess, 1500*time.Millisecond),
			`  2026-11-28 10:29:58 App\Jobs\SendInvoice ` + strings.Repeat(".", 19) + ` 1,500.00ms DONE`},
		{"9.21", false, ev(worker.EventReleased, 3*time.Millisecond), // started 3 ms before the second
			`  2026-11-28 10:29:59 App\Jobs\SendInvoice ` + strings.Repeat(".", 23) + ` 3.00ms FAIL`},
		// 9.41+: RUNNING (78 columns), then the result; -v adds the id.
		{"9.52", false, ev(worker.EventStarting, 0), `  2026-11-28 10:30:00 App\Jobs\SendInvoice ` + strings.Repeat(".", 27) + ` RUNNING`},
		{"9.52", true, ev(worker.EventStarting, 0), `  2026-11-28 10:30:00 App\Jobs\SendInvoice 42 ` + strings.Repeat(".", 24) + ` RUNNING`},
		{"10.12", false, ev(worker.EventFailed, 2*time.Second), `  2026-11-28 10:30:00 App\Jobs\SendInvoice ` + strings.Repeat(".", 19) + ` 2,000.00ms FAIL`},
		{"10.13", false, ev(worker.EventFailed, 2*time.Second), `  2026-11-28 10:30:00 App\Jobs\SendInvoice ` + strings.Repeat(".", 27) + ` 2s FAIL`},
		// formatRunTime came in 10.13.1.
		{"10.13.0", false, ev(worker.EventFailed, 2*time.Second), `  2026-11-28 10:30:00 App\Jobs\SendInvoice ` + strings.Repeat(".", 19) + ` 2,000.00ms FAIL`},
		{"11", true, ev(worker.EventSuccess, 12*time.Millisecond), `  2026-11-28 10:30:00 App\Jobs\SendInvoice 42 ` + strings.Repeat(".", 19) + ` 12.00ms DONE`},
		// 12.20+: -v adds the id, the connection and the queue.
		{"12.20", true, ev(worker.EventSuccess, 12*time.Millisecond),
			`  2026-11-28 10:30:00 App\Jobs\SendInvoice 42 database emails ` + strings.Repeat(".", 4) + ` 12.00ms DONE`},
		{"12", false, ev(worker.EventSuccess, 12*time.Millisecond), `  2026-11-28 10:30:00 App\Jobs\SendInvoice ` + strings.Repeat(".", 22) + ` 12.00ms DONE`},
	} {
		got := consoleLine(tc.e, ConsoleParams{Version: v(tc.version), Location: paris, Verbose: tc.verbose, Width: 80})
		want := tc.want
		if want != "" {
			want += "\n"
		}
		if got != want {
			t.Errorf("%s %s verbose=%v:\n got %q\nwant %q", tc.version, tc.e.Status, tc.verbose, got, want)
		}
		if want != "" && strings.HasPrefix(want, "  ") && len(strings.TrimSuffix(got, "\n")) > 79 {
			t.Errorf("%s: %d columns, wider than the terminal less one", tc.version, len(got)-1)
		}
	}
	// 13.3+: -v adds the memory after the run time, within the width.
	got := consoleLine(ev(worker.EventSuccess, 12*time.Millisecond), ConsoleParams{Version: v("13"), Location: paris, Verbose: true, Width: 120})
	if !strings.Contains(got, " 12.00ms ") || !strings.HasSuffix(got, "MB DONE\n") || len(got)-1 != 119 {
		t.Errorf("13.x verbose: %q (%d columns), want the memory after the run time on 119", got, len(got)-1)
	}
	// Decorated: each dot coloured on its own, as PHP writes '<fg=gray>.</>' n times.
	got = consoleLine(ev(worker.EventStarting, 0), ConsoleParams{Version: v("10"), Location: time.UTC, Decorated: true, Width: 54})
	if want := "  \x1b[90m2026-11-28 09:30:00\x1b[39m App\\Jobs\\SendInvoice \x1b[90m.\x1b[39m \x1b[33;1mRUNNING\x1b[39;22m\n"; got != want {
		t.Errorf("decorated:\n got %q\nwant %q", got, want)
	}
}

// TestConsoleHeader prints Laravel 9.21+'s "Processing jobs from" line: always up to 9.40, only with a
// terminal on standard input from 9.41.
func TestConsoleHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version, queues string
		stdinTerminal   bool
		want            string
	}{
		{"8.83", "default", true, ""},
		{"9.21", "default", false, "\n   INFO  Processing jobs from the [default] queue.  \n\n"},
		{"9.41", "high,default", false, ""},
		{"12", "high,default", true, "\n   INFO  Processing jobs from the [high,default] queues.  \n\n"},
	} {
		v, _ := payload.ParseVersion(tc.version)
		if got := consoleHeader(v, tc.queues, tc.stdinTerminal, false); got != tc.want {
			t.Errorf("%s terminal=%v: %q, want %q", tc.version, tc.stdinTerminal, got, tc.want)
		}
	}
	// Decorated as Termwind renders Laravel's info component: the label white on blue, [...] bold.
	v, _ := payload.ParseVersion("12")
	if got, want := consoleHeader(v, "default", true, true), "\n  \x1b[37;44m INFO \x1b[39;49m Processing jobs from the \x1b[1m[default]\x1b[22m queue.  \n\n"; got != want {
		t.Errorf("decorated: %q, want %q", got, want)
	}
}

// TestTerminalWidth reads COLUMNS as PHP's (int) does, and falls back to 80 without a terminal.
func TestTerminalWidth(t *testing.T) {
	t.Parallel()
	env := func(v string, ok bool) func(string) (string, bool) {
		return func(string) (string, bool) { return v, ok }
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tc := range []struct {
		v    string
		ok   bool
		want int
	}{{"120", true, 120}, {" 100 ", true, 100}, {"90x", true, 90}, {"wide", true, 0}, {"", false, 80}} {
		if got := terminalWidth(env(tc.v, tc.ok), devNull); got != tc.want {
			t.Errorf("COLUMNS %q (set %v): %d, want %d", tc.v, tc.ok, got, tc.want)
		}
	}
	if isTerminal(devNull) {
		t.Error("/dev/null is taken for a terminal")
	}
}

// BenchmarkConsoleLine renders a DONE line, as a busy worker does twice per job.
func BenchmarkConsoleLine(b *testing.B) {
	v, _ := payload.ParseVersion("12")
	p := ConsoleParams{Version: v, Location: time.UTC, Width: 80}
	e := worker.RunEvent{Status: worker.EventSuccess, ID: 42, Connection: "database", Queue: "default", Job: `App\Jobs\SendInvoice`,
		Duration: 1234 * time.Microsecond, Time: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		_ = consoleLine(e, p)
	}
}

// TestColorSupport decides colours as Symfony Console 5.4's StreamOutput::hasColorSupport.
func TestColorSupport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env      map[string]string
		terminal bool
		want     bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, true, true},
		{map[string]string{"TERM": "xterm-256color"}, false, false},
		{map[string]string{"TERM": "dumb"}, true, false},
		{map[string]string{}, true, false},
		{map[string]string{"TERM": "foo"}, true, false},
		{map[string]string{"TERM": "foo-256color"}, true, true},
		{map[string]string{"TERM": "dumb", "COLORTERM": ""}, true, true},
		{map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, true, false},
		{map[string]string{"TERM": "xterm", "NO_COLOR": ""}, true, true},
		{map[string]string{"TERM": "xterm", "MSYSTEM": "mingw64"}, false, true},
	} {
		getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		if got := colorSupport(getenv, tc.terminal, payload.Version{Major: 8, Minor: 83}); got != tc.want {
			t.Errorf("%v terminal=%v: %v, want %v", tc.env, tc.terminal, got, tc.want)
		}
	}
	// Laravel 11+'s Symfony 7.2 colours under FORCE_COLOR, off a terminal too; 5.4–6's Symfony colours
	// any terminal, and no NO_COLOR at all.
	for _, tc := range []struct {
		version  payload.Version
		env      map[string]string
		terminal bool
		want     bool
	}{
		{payload.Version{Major: 12, Minor: 999}, map[string]string{"FORCE_COLOR": "0"}, false, true},
		{payload.Version{Major: 8, Minor: 83}, map[string]string{"FORCE_COLOR": "1"}, false, false},
		{payload.Version{Major: 6, Minor: 20}, map[string]string{"TERM": "dumb"}, true, true},
		{payload.Version{Major: 6, Minor: 20}, map[string]string{"NO_COLOR": ""}, true, false},
	} {
		getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		if got := colorSupport(getenv, tc.terminal, tc.version); got != tc.want {
			t.Errorf("%d.%d %v terminal=%v: %v, want %v", tc.version.Major, tc.version.Minor, tc.env, tc.terminal, got, tc.want)
		}
	}
}

// TestQueuePausedLines prints Laravel 13.26+'s lines for a queue the worker sees paused or resumed,
// on the console and as --json does.
func TestQueuePausedLines(t *testing.T) {
	t.Parallel()
	v, _ := payload.ParseVersion("13.26")
	at := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	paused := worker.RunEvent{Status: worker.EventQueuePaused, Connection: "database", Queue: "emails", Time: at}
	resumed := paused
	resumed.Status = worker.EventQueueResumed
	if got := consoleLine(paused, ConsoleParams{Version: v, Location: time.UTC, Width: 80}); got != "  2026-11-28 09:30:00 Queue emails PAUSED\n" {
		t.Errorf("paused: %q", got)
	}
	if got := consoleLine(resumed, ConsoleParams{Version: v, Location: time.UTC, Decorated: true}); got != "  \x1b[90m2026-11-28 09:30:00\x1b[39m Queue \x1b[34memails\x1b[39m \x1b[32;1mRESUMED\x1b[39;22m\n" {
		t.Errorf("resumed, decorated: %q", got)
	}
	if got := string(jsonEventLine(paused, time.UTC)); got != `{"level":"warning","queue":"emails","status":"paused","timestamp":"2026-11-28T09:30:00.000000+00:00"}`+"\n" {
		t.Errorf("paused as JSON: %s", got)
	}
}

// TestOutputTimezone: Laravel 9.49+ prints queue:work's times in queue.output_timezone when it is set
// and not the app's zone (WorkCommand::now); before 9.49, and without it, in the app's.
func TestOutputTimezone(t *testing.T) {
	for _, c := range []struct {
		version, app, output, want string
	}{
		{"9.49", "UTC", "America/New_York", "America/New_York"},
		{"13.26", "Europe/Paris", "Asia/Tokyo", "Asia/Tokyo"},
		{"9.48", "UTC", "America/New_York", "UTC"},
		{"8.83", "Europe/Paris", "America/New_York", "Europe/Paris"},
		{"12.0", "Europe/Paris", "", "Europe/Paris"},
		{"12.0", "Europe/Paris", "Europe/Paris", "Europe/Paris"},
	} {
		cfg := config.Default()
		cfg.LaravelVersion, cfg.App.Timezone, cfg.Log.OutputTimezone = c.version, c.app, c.output
		if got := outputTimezone(&cfg); got != c.want {
			t.Errorf("%s, app %s, output %q: %s, want %s", c.version, c.app, c.output, got, c.want)
		}
	}
}

// TestConsoleLineWidth fills twoColumnDetail and task lines to the terminal's width, up to 150
// columns, as Laravel's components do (Termwind's max-w-150, Task's min(width, 150)).
func TestConsoleLineWidth(t *testing.T) {
	t.Parallel()
	v, _ := payload.ParseVersion("11")
	for _, tc := range []struct{ width, line int }{{80, 80}, {120, 120}, {200, 150}, {10, 0}} {
		var out strings.Builder
		c := newConsole("11", &out, io.Discard, false, tc.width)
		c.detail("App\\Jobs\\SendInvoice", "3")
		c.task("Retrying job 7", 2*time.Millisecond, v)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("width %d: %q", tc.width, out.String())
		}
		if tc.line == 0 { // narrower than the texts: no dots
			if strings.Contains(lines[0], "..") || strings.Contains(lines[1], "..") {
				t.Errorf("width %d: dots in %q", tc.width, lines)
			}
			continue
		}
		if got := len(lines[0]); got != tc.line {
			t.Errorf("width %d: detail line %d columns, want %d: %q", tc.width, got, tc.line, lines[0])
		}
		if got := len(lines[1]); got != tc.line-2 {
			t.Errorf("width %d: task line %d columns, want %d: %q", tc.width, got, tc.line-2, lines[1])
		}
	}
}
