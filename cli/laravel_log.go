package cli

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// laravelLog is a worker.Observer that appends each job exception PHP's worker would report to the
// application's log file, in the line Laravel's exception handler writes through Monolog's
// LineFormatter (stack traces included, line breaks kept): "[Y-m-d H:i:s] <env>.ERROR: <message>
// {"exception":"[object] (<class>(code: 0): <message> at <file>:<line>)\n[stacktrace]\n<trace>\n"} ",
// each previous exception after its own "[previous exception]". Lines go to a file that exists only;
// one that does not is warned about once and left to PHP to create.
type laravelLog struct {
	path   string // may hold {date}
	env    string // APP_ENV: Laravel's log channel name in the line
	loc    *time.Location
	log    *slog.Logger
	now    func() time.Time
	mu     sync.Mutex
	absent map[string]bool
}

// newLaravelLog returns the observer for path ("" or "off": none).
func newLaravelLog(path, env, timezone string, log *slog.Logger) *laravelLog {
	if path == "" || path == "off" {
		return nil
	}
	loc, err := time.LoadLocation(timezone)
	if err != nil {
		loc = time.UTC
	}
	return &laravelLog{path: path, env: env, loc: loc, log: log, now: time.Now, absent: map[string]bool{}}
}

func (l *laravelLog) Claimed(string, int, time.Duration, error) {}

func (l *laravelLog) JobStarted(ctx context.Context, _ *worker.JobEvent) context.Context { return ctx }

// JobFinished writes the job's exception when PHP's worker would have reported it.
func (l *laravelLog) JobFinished(_ context.Context, e *worker.JobEvent) {
	if !e.Reported {
		return
	}
	now := l.now().In(l.loc)
	line := monologLine(now, l.env, worker.Throwables(e.Err, e.Handler))
	file := strings.ReplaceAll(l.path, "{date}", now.Format("2006-01-02"))
	l.mu.Lock()
	defer l.mu.Unlock()
	// O_APPEND without O_CREATE: one write per line, after PHP's own lines, never a file of ours.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		if !l.absent[file] {
			l.absent[file] = true
			msg := "the application's log file cannot be written; job exceptions are not reported there"
			if errors.Is(err, fs.ErrNotExist) {
				msg = "the application's log file does not exist yet; job exceptions are reported there once PHP has created it"
			}
			l.log.Warn(msg, "file", file, "error", err)
		}
		return
	}
	delete(l.absent, file)
	if _, err := f.Write(line); err != nil {
		l.log.Warn("could not write to the application's log file", "file", file, "error", err)
	}
	f.Close()
}

// monologLine renders the record Laravel's handler logs for an exception: the message of the one
// thrown, and the exception context as Monolog's LineFormatter normalizes it, JSON-encoded without
// escaped slashes or unicode and with its line breaks kept.
func monologLine(at time.Time, env string, chain []worker.Throwable) []byte {
	if len(chain) == 0 {
		return nil
	}
	var ctx strings.Builder
	for i, t := range chain {
		if i > 0 {
			ctx.WriteString("\n[previous exception] ")
		}
		ctx.WriteString("[object] (" + t.Class + "(code: 0): " + t.Message + " at " + t.File + ":" + strconv.Itoa(t.Line) + ")")
		ctx.WriteString("\n[stacktrace]\n" + t.TraceString() + "\n")
	}
	b := []byte("[" + at.Format("2006-01-02 15:04:05") + "] " + env + ".ERROR: " + strings.ToValidUTF8(chain[0].Message, "?") + ` {"exception":`)
	enc, err := payload.AppendPHPJSONString(nil, strings.ToValidUTF8(ctx.String(), "?"), true)
	if err != nil {
		return nil
	}
	// Monolog encodes with JSON_UNESCAPED_SLASHES, and LineFormatter puts back the line breaks
	// json_encode escaped (allowInlineLineBreaks), as naively as Monolog does.
	enc = []byte(strings.NewReplacer(`\/`, "/", `\r`, "\r", `\n`, "\n").Replace(string(enc)))
	b = append(b, enc...)
	return append(b, "} \n"...)
}
