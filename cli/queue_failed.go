package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// failedProvider is the failed-job provider the configuration names (queue.failed.driver): whether
// ids are uuids, and whether failed jobs are recorded at all.
type failedProvider struct {
	byUUID, null bool
}

func (a *adminRun) failedProvider() (failedProvider, error) {
	switch a.cfg.Failed.Driver {
	case "database-uuids":
		return failedProvider{byUUID: true}, nil
	case "database":
		return failedProvider{}, nil
	case "null":
		return failedProvider{null: true}, nil
	}
	return failedProvider{}, fmt.Errorf("failed.driver %q (QUEUE_FAILED_DRIVER): artisan-go reads the database and database-uuids failed-job providers only", a.cfg.Failed.Driver)
}

// uuidMismatch explains, when it is so, that failed.driver is database-uuids while failed_jobs has
// no uuid column (a table made before Laravel 8 in an application upgraded since): failed jobs are
// then recorded without one, and no job can be found by its id.
func uuidMismatch(ctx context.Context, cfg *config.Config, conn *laravel.Conn) (string, error) {
	if cfg.Failed.Driver != "database-uuids" {
		return "", nil
	}
	has, err := conn.FailedJobHasUUID(ctx)
	if err != nil || has {
		return "", err
	}
	return "failed_jobs has no uuid column, and failed.driver is database-uuids (QUEUE_FAILED_DRIVER; config/queue.php's default from Laravel 8), which finds failed jobs by it: " +
		"set QUEUE_FAILED_DRIVER=database for a table made before Laravel 8, or add the uuid column as Laravel 8's upgrade guide does", nil
}

// needUUIDs stops a command that finds failed jobs by id when the provider's ids cannot be read.
func (a *adminRun) needUUIDs(ctx context.Context, p failedProvider) error {
	if !p.byUUID {
		return nil
	}
	conn, err := a.conn(ctx)
	if err != nil {
		return err
	}
	msg, err := uuidMismatch(ctx, a.cfg, conn)
	if err == nil && msg != "" {
		err = errors.New(msg)
	}
	return err
}

func (p failedProvider) ref(id string) *laravel.FailedJobRef {
	return &laravel.FailedJobRef{ID: id, ByUUID: p.byUUID}
}

func runQueueFailed(ctx context.Context, a *adminRun) int {
	prov, err := a.failedProvider()
	if err != nil {
		return a.failure(err)
	}
	var jobs []*laravel.FailedJob
	hasUUID := false
	if !prov.null {
		conn, err := a.conn(ctx)
		if err != nil {
			return a.failure(err)
		}
		if hasUUID, err = conn.FailedJobHasUUID(ctx); err != nil {
			return a.failure(err)
		}
		if jobs, err = conn.FailedJobList(ctx, &laravel.FailedJobListParams{}); err != nil {
			return a.failure(err)
		}
		if len(jobs) > 0 && prov.byUUID && !hasUUID {
			// PHP's uuid provider lists rows by a uuid they lack, and stops (Undefined property);
			// a table without ids to retry or forget them by is no list to print either.
			if err := a.needUUIDs(ctx, prov); err != nil {
				return a.failure(err)
			}
		}
	}
	rows := make([][]any, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, a.failedRow(j, prov, hasUUID))
	}
	if a.set["json"] {
		list := make([]map[string]any, 0, len(rows))
		keys := []string{"id", "connection", "queue", "class", "failed_at"}
		for _, r := range rows {
			m := map[string]any{}
			for i, k := range keys {
				if i < len(r) {
					m[k] = r[i]
				}
			}
			list = append(list, m)
		}
		b, err := phpJSON(list, keys)
		if err != nil {
			return a.failure(err)
		}
		fmt.Fprintln(a.con.out, string(b))
		return 0
	}
	if len(rows) == 0 {
		if a.at(9, 5) && !a.at(9, 21) {
			a.con.comment("No failed jobs found.") // $this->comment() until the components style
		} else if a.at(9, 5) {
			a.con.info("No failed jobs found.")
		} else {
			a.con.info("No failed jobs!")
		}
		return 0
	}
	text := make([][]string, len(rows))
	for i, r := range rows {
		for _, cell := range r {
			text[i] = append(text[i], fmt.Sprint(cell))
		}
	}
	if !a.con.modern {
		a.con.table([]string{"ID", "Connection", "Queue", "Class", "Failed At"}, text)
		return 0
	}
	fmt.Fprintln(a.con.out)
	for _, r := range text {
		for len(r) < 5 {
			r = append(r, "")
		}
		a.con.detail(a.con.paint("gray", r[4])+" "+r[0], a.con.paint("gray", r[1]+"@"+r[2])+" "+r[3])
	}
	fmt.Fprintln(a.con.out)
	return 0
}

// failedRow is the row ListFailedCommand shows for a failed job: the provider's record without payload
// and exception, with the class spliced in at the fourth place. The database-uuids provider puts the
// uuid in place of the id; the database provider on a table with a uuid column keeps both, which
// shifts the columns as it does in PHP.
func (a *adminRun) failedRow(j *laravel.FailedJob, prov failedProvider, hasUUID bool) []any {
	var rec []any
	switch {
	case prov.byUUID:
		rec = []any{j.UUID, j.Connection, j.Queue, j.FailedAt}
	case hasUUID:
		rec = []any{j.ID, j.UUID, j.Connection, j.Queue, j.FailedAt}
	default:
		rec = []any{j.ID, j.Connection, j.Queue, j.FailedAt}
	}
	row := append([]any{}, rec[:3]...)
	row = append(row, a.jobName(j.Payload))
	return append(row, rec[3:]...)
}

var firstQuoted = regexp.MustCompile(`"([^"]+)"`)

// jobName is ListFailedCommand::extractJobName: the raw job's `job`, or (12.61+, 13.12+) the displayName, or
// the first quoted string of data.command, or `job`; "" for a payload that is not JSON.
func (a *adminRun) jobName(raw []byte) string {
	var p map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil || len(p) == 0 {
		return ""
	}
	job := phpText(p["job"])
	data, _ := p["data"].(map[string]any)
	cmd, ok := data["command"].(string)
	if !ok {
		return job
	}
	if d, ok := p["displayName"].(string); ok && d != "" && a.version.Since([2]int{12, 61}, [2]int{13, 12}) {
		return d
	}
	if m := firstQuoted.FindStringSubmatch(cmd); m != nil {
		return m[1]
	}
	return job
}

// phpText is a JSON scalar as PHP prints it in a table cell: a string as it is, a number as written
// (a fraction as its shortest form), true "1"; false, null, arrays and objects "".
func phpText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return strconv.FormatInt(n, 10)
		}
		if f, err := v.Float64(); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	case bool:
		if v {
			return "1"
		}
	}
	return ""
}

// phpJSON writes a list of objects with the given keys in order as PHP's json_encode does by default
// (`/` and non-ASCII escaped).
func phpJSON(list []map[string]any, keys []string) ([]byte, error) {
	b := []byte{'['}
	var err error
	for i, m := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for k, key := range keys {
			if k > 0 {
				b = append(b, ',')
			}
			if b, err = payload.AppendJSONString(b, key); err != nil {
				return nil, err
			}
			b = append(b, ':')
			switch v := m[key].(type) {
			case int64:
				b = strconv.AppendInt(b, v, 10)
			case string:
				if b, err = payload.AppendJSONString(b, v); err != nil {
					return nil, err
				}
			default:
				b = append(b, "null"...)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func runQueueForget(ctx context.Context, a *adminRun) int {
	if len(a.args) != 1 {
		return a.failure(errors.New(`Not enough arguments (missing: "id").`))
	}
	prov, err := a.failedProvider()
	if err == nil {
		err = a.needUUIDs(ctx, prov)
	}
	if err != nil {
		return a.failure(err)
	}
	deleted := false
	if !prov.null {
		conn, err := a.conn(ctx)
		if err != nil {
			return a.failure(err)
		}
		if deleted, err = conn.FailedJobForget(ctx, prov.ref(a.args[0])); err != nil {
			return a.failure(err)
		}
	}
	if !deleted {
		a.con.fail("No failed job matches the given ID.")
		return 1
	}
	if a.at(9, 5) {
		a.con.info("Failed job deleted successfully.")
	} else {
		a.con.info("Failed job deleted successfully!")
	}
	return 0
}

// hoursOption reads an --hours style option as Carbon's subHours takes PHP's string: a number, its
// fraction dropped (1.5 is 1), a negative one counting forward from now. What is not a number stops
// the command, where PHP's stops with a TypeError.
func hoursOption(name, v string) (int, error) {
	f, err := strconv.ParseFloat(strings.Trim(v, " \t\n\r\v\f"), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1e6 {
		return 0, fmt.Errorf("--%s=%q: give a number of hours, e.g. --%s=48", name, v, name)
	}
	return int(f), nil
}

// appNow returns now in the app timezone, as Carbon::now() gives it to the query builder.
func (a *adminRun) appNow() (time.Time, error) {
	loc, err := time.LoadLocation(a.cfg.App.Timezone)
	if err != nil {
		return time.Time{}, fmt.Errorf("app.timezone %q: %w", a.cfg.App.Timezone, err)
	}
	return time.Now().In(loc), nil
}

func runQueueFlush(ctx context.Context, a *adminRun) int {
	return a.deleteFailed(ctx, "hours", true)
}

func runQueuePruneFailed(ctx context.Context, a *adminRun) int {
	return a.deleteFailed(ctx, "hours", false)
}

// deleteFailed runs queue:flush (inclusive: failed_at <= cutoff, no cutoff without --hours) or
// queue:prune-failed (failed_at < cutoff, 24 hours by default), in chunks with progress, stopping
// between chunks when interrupted.
func (a *adminRun) deleteFailed(ctx context.Context, opt string, flush bool) int {
	prov, err := a.failedProvider()
	if err != nil {
		return a.failure(err)
	}
	// queue:prune-failed always has a cutoff (24 hours unless --hours); queue:flush has one when its
	// --hours is truthy to PHP (when($hours): not "" nor "0"), and deletes every failed job otherwise.
	hours, raw := 24, a.option(opt)
	cutoff := !flush || raw != "" && raw != "0"
	if a.set[opt] && cutoff { // an empty --hours stops prune-failed, as PHP's subHours('') does
		if hours, err = hoursOption(opt, raw); err != nil {
			return a.failure(err)
		}
	}
	if prov.null && !flush {
		a.con.fail("The [NullFailedJobProvider] failed job storage driver does not support pruning.")
		return 1
	}
	var deleted int64
	if !prov.null {
		p := &laravel.FailedJobDeleteParams{Inclusive: flush}
		if cutoff {
			now, err := a.appNow()
			if err != nil {
				return a.failure(err)
			}
			p.Before = now.Add(-time.Duration(hours) * time.Hour)
		}
		conn, err := a.conn(ctx)
		if err != nil {
			return a.failure(err)
		}
		total, err := conn.FailedJobCount(ctx, p)
		if err != nil {
			return a.failure(err)
		}
		bar := newProgress(a.stderr, "deleted", total, 10000)
		for {
			if ctx.Err() != nil {
				bar.end()
				return a.interrupted("deleting %d of %d failed jobs; the others are still there", deleted, total)
			}
			n, err := conn.FailedJobDelete(context.WithoutCancel(ctx), p)
			if err != nil {
				bar.end()
				return a.failure(err)
			}
			if n == 0 {
				break
			}
			deleted += n
			bar.add(n)
		}
		bar.end()
	}
	switch {
	case !flush && a.con.modern:
		a.con.info(fmt.Sprintf("%d entries deleted.", deleted))
	case !flush:
		a.con.info(fmt.Sprintf("%d entries deleted!", deleted))
	case cutoff:
		// The option as given, as FlushFailedCommand prints it; "!" until 9.5, as the other lines.
		end := "."
		if !a.at(9, 5) {
			end = "!"
		}
		a.con.info(fmt.Sprintf("All jobs that failed more than %s hours ago have been deleted successfully%s", raw, end))
	case a.at(9, 5):
		a.con.info("All failed jobs deleted successfully.")
	default:
		a.con.info("All failed jobs deleted successfully!")
	}
	return 0
}
