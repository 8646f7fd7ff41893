package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// connectionArg checks a queue connection named on the command line: artisan-go reaches the
// configured database connection only.
func (a *adminRun) connectionArg(name string) error {
	_, err := a.connectionDriver(name)
	return err
}

// connectionDriver returns the driver of a queue connection named on the command line (name "": the
// configured one): "database" for the configured database connection, and for sync and null, which
// hold no jobs, their driver, also when QUEUE_CONNECTION names them; any other connection is refused,
// with Laravel's message for one that is not configured.
func (a *adminRun) connectionDriver(name string) (string, error) {
	if name == "" {
		name = a.cfg.Connection
	}
	driver, known := a.cfg.QueueDriver(name)
	switch {
	case !known:
		return "", fmt.Errorf("The [%s] queue connection has not been configured.", name)
	case driver == "sync" || driver == "null":
		return driver, nil
	case driver == "database" && name == a.cfg.Connection:
		return driver, nil
	}
	if d, _ := a.cfg.QueueDriver(a.cfg.Connection); d != "database" {
		return "", fmt.Errorf("queue connection [%s]: artisan-go reads the settings of the connection QUEUE_CONNECTION names, and [%s] is not a database one; run it with QUEUE_CONNECTION=%s", name, a.cfg.Connection, name)
	}
	return "", fmt.Errorf("queue connection [%s]: artisan-go manages the database connection [%s] (QUEUE_CONNECTION) only", name, a.cfg.Connection)
}

// emptyQueueClass is the class of the queues of the sync and null drivers, which hold no jobs.
var emptyQueueClass = map[string]string{"sync": "SyncQueue", "null": "NullQueue"}

// defaultQueue is the connection's queue: queue.connections.database.queue (DB_QUEUE).
func (a *adminRun) defaultQueue() string {
	if len(a.cfg.Worker.Queues) > 0 && a.cfg.Worker.Queues[0] != "" {
		return a.cfg.Worker.Queues[0]
	}
	return "default"
}

// confirmToProceed is Laravel's ConfirmableTrait: in production, unless --force, it warns and asks,
// and anything but yes cancels.
func (a *adminRun) confirmToProceed() bool {
	if a.cfg.App.Env != "production" || a.set["force"] {
		return true
	}
	out := a.con.out
	var answer string
	if a.con.modern {
		fmt.Fprintf(out, "\n  WARN  Application In Production.\n\n")
	} else {
		msg := "Application In Production!"
		fmt.Fprintln(out, a.con.paint("comment", strings.Repeat("*", len(msg)+12)))
		fmt.Fprintln(out, a.con.paint("comment", "*     "+msg+"     *"))
		fmt.Fprintln(out, a.con.paint("comment", strings.Repeat("*", len(msg)+12)))
		fmt.Fprintln(out)
	}
	// Not interactive (-n, -q): Symfony takes the default answer without asking.
	if a.stdin != nil {
		if a.con.modern {
			fmt.Fprint(out, " Are you sure you want to run this command? (yes/no) [no]\n> ")
		} else {
			fmt.Fprint(out, " "+a.con.paint("info", "Do you really wish to run this command? (yes/no)")+" ["+a.con.paint("comment", "no")+"]:\n > ")
		}
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		answer = strings.ToLower(strings.TrimSpace(line))
		if line != "" {
			fmt.Fprintln(out) // after an answer; at the end of the input, the next line follows the prompt
		}
	}
	if answer == "y" || answer == "yes" {
		return true
	}
	if a.con.modern {
		fmt.Fprintf(out, "\n  WARN  Command cancelled.\n\n")
	} else {
		fmt.Fprintln(out, a.con.paint("comment", "Command Canceled!"))
	}
	return false
}

func runQueueClear(ctx context.Context, a *adminRun) int {
	conn := ""
	if len(a.args) == 1 {
		conn = a.args[0]
	}
	driver, err := a.connectionDriver(conn)
	if err != nil {
		return a.failure(err)
	}
	if !a.confirmToProceed() {
		return 1
	}
	if driver != "database" {
		// PHP clears only queues that implement ClearableQueue, and says so for the others.
		msg := "Clearing queues is not supported on [" + emptyQueueClass[driver] + "]"
		if a.con.modern {
			a.con.label(a.con.out, "ERROR", "error", msg)
		} else {
			fmt.Fprintln(a.con.out, a.con.paint("error", msg)+" ")
		}
		if a.at(10, 41) {
			return 1 // an exit status from 10.41
		}
		return 0
	}
	queue := a.option("queue")
	if queue == "" {
		queue = a.defaultQueue()
	}
	queues := []string{queue}
	if a.at(13, 22) {
		// 13.22 clears each of a comma-separated list: trimmed, empty and repeated names dropped.
		queues = nil
		for q := range strings.SplitSeq(queue, ",") {
			if q = strings.TrimSpace(q); q != "" && !slices.Contains(queues, q) {
				queues = append(queues, q)
			}
		}
	}
	db, err := a.conn(ctx)
	if err != nil {
		return a.failure(err)
	}
	var n int64
	for _, q := range queues {
		cleared, err := db.JobClear(ctx, &laravel.JobClearParams{Queue: q})
		if err != nil {
			return a.failure(err)
		}
		n += cleared
	}
	if a.con.modern {
		job, noun := "jobs", "queue"
		if n == 1 {
			job = "job"
		}
		if len(queues) != 1 {
			noun = "queues"
		}
		a.con.info(fmt.Sprintf("Cleared %d %s from the [%s] %s", n, job, strings.Join(queues, ", "), noun))
	} else {
		fmt.Fprintln(a.con.out, a.con.paint("info", fmt.Sprintf("Cleared %d jobs from the [%s] queue", n, queue))+" ")
	}
	return 0
}

// monitored is one queue of queue:monitor.
type monitored struct {
	connection, queue string
	nullConnection    bool // the default connection is PHP's null: shown empty, null in JSON
	sizes             *laravel.QueueSizes
	alert             bool
}

// shownConnection is the connection's name as PHP prints it: empty for PHP's null.
func (m monitored) shownConnection() string {
	if m.nullConnection {
		return ""
	}
	return m.connection
}

func runQueueMonitor(ctx context.Context, a *adminRun) int {
	if len(a.args) != 1 {
		return a.failure(errors.New(`Not enough arguments (missing: "queues"): give the queues, e.g. default or database:high,database:low`))
	}
	// PHP compares the size with the option's string as PHP 8 compares an integer with a string: as
	// numbers when it is numeric (2.5), else the size's digits byte by byte ("" is always reached).
	max := a.option("max")
	db, err := a.conn(ctx)
	if err != nil {
		return a.failure(err)
	}
	var list []monitored
	for _, spec := range strings.Split(a.args[0], ",") {
		conn, queue, ok := strings.Cut(spec, ":")
		nullConn := false
		if !ok {
			conn, queue = a.cfg.Connection, spec
			nullConn = a.cfg.ConnectionShown() == "" && conn == "null"
		}
		driver, err := a.connectionDriver(conn)
		if err != nil {
			return a.failure(err)
		}
		// An empty name is shown empty, and sized as the connection's default queue, as PHP does.
		name := queue
		if queue == "" {
			queue = a.defaultQueue()
		}
		s := &laravel.QueueSizes{} // sync and null hold no jobs
		if driver == "database" {
			if s, err = db.QueueSizes(ctx, &laravel.QueueSizesParams{Queue: queue, Now: time.Now().Unix()}); err != nil {
				return a.failure(err)
			}
		}
		list = append(list, monitored{connection: conn, nullConnection: nullConn, queue: name, sizes: s, alert: phpCompare(strconv.FormatInt(s.Size, 10), max) >= 0})
	}
	detailed := a.at(12, 19)
	if !a.at(12, 53) {
		// 12.19–12.52 look for the oldest pending job through a method no queue has: null, not shown.
		for _, m := range list {
			m.sizes.OldestPending = 0
		}
	}
	switch {
	case a.set["json"]:
		a.monitorJSON(list, detailed)
	case a.con.modern:
		a.monitorDetails(list, detailed)
	default:
		rows := make([][]string, 0, len(list))
		for _, m := range list {
			status := "OK"
			if m.alert {
				status = a.con.paint("red", "ALERT")
			}
			rows = append(rows, []string{m.shownConnection(), m.queue, strconv.FormatInt(m.sizes.Size, 10), status})
		}
		a.con.table([]string{"Connection", "Queue", "Size", "Status"}, rows)
	}
	for _, m := range list {
		if m.alert {
			fmt.Fprintf(a.stderr, "artisan-go queue:monitor: queue [%s] on [%s] has %d jobs, at or above --max=%s\n", m.queue, m.connection, m.sizes.Size, max)
		}
	}
	for _, m := range list {
		if m.alert {
			return 1
		}
	}
	return 0
}

func (a *adminRun) monitorJSON(list []monitored, detailed bool) {
	keys := []string{"connection", "queue", "size", "status"}
	if detailed {
		keys = []string{"connection", "queue", "size", "pending", "delayed", "reserved", "oldest_pending", "status"}
	}
	out := make([]map[string]any, 0, len(list))
	for _, m := range list {
		status := "OK"
		if m.alert {
			status = "ALERT"
		}
		var conn any = m.connection
		if m.nullConnection {
			conn = nil
		}
		row := map[string]any{"connection": conn, "queue": m.queue, "size": m.sizes.Size, "status": status,
			"pending": m.sizes.Pending, "delayed": m.sizes.Delayed, "reserved": m.sizes.Reserved}
		if m.sizes.OldestPending != 0 {
			row["oldest_pending"] = m.sizes.OldestPending
		}
		out = append(out, row)
	}
	b, _ := phpJSON(out, keys)
	fmt.Fprintln(a.con.out, string(b))
}

func (a *adminRun) monitorDetails(list []monitored, detailed bool) {
	fmt.Fprintln(a.con.out)
	a.con.detail(a.con.paint("gray", "Queue name"), a.con.paint("gray", "Size / Status"))
	for _, m := range list {
		status := a.con.paint("green;bold", "OK")
		if m.alert {
			status = a.con.paint("yellow;bold", "ALERT")
		}
		a.con.detail("["+m.shownConnection()+"] "+m.queue, "["+strconv.FormatInt(m.sizes.Size, 10)+"] "+status)
		if detailed {
			a.con.detail("Pending jobs", strconv.FormatInt(m.sizes.Pending, 10))
			a.con.detail("Delayed jobs", strconv.FormatInt(m.sizes.Delayed, 10))
			a.con.detail("Reserved jobs", strconv.FormatInt(m.sizes.Reserved, 10))
			if a.at(12, 54) {
				oldest := "N/A"
				if m.sizes.OldestPending != 0 {
					oldest = agoForHumans(time.Since(time.Unix(m.sizes.OldestPending, 0)))
				}
				a.con.detail("Oldest pending job", oldest)
			}
			fmt.Fprintln(a.con.out)
		}
	}
	fmt.Fprintln(a.con.out)
}

// agoForHumans writes a past duration as Carbon's diffForHumans does: its largest unit, "ago".
func agoForHumans(d time.Duration) string {
	s := int64(d / time.Second)
	units := []struct {
		name string
		secs int64
	}{{"year", 365 * 86400}, {"month", 30 * 86400}, {"week", 7 * 86400}, {"day", 86400}, {"hour", 3600}, {"minute", 60}, {"second", 1}}
	for _, u := range units {
		if n := s / u.secs; n >= 1 {
			if n > 1 {
				return fmt.Sprintf("%d %ss ago", n, u.name)
			}
			return fmt.Sprintf("1 %s ago", u.name)
		}
	}
	return "0 seconds ago"
}

func runQueuePruneBatches(ctx context.Context, a *adminRun) int {
	type pass struct {
		opt  string
		kind laravel.BatchPruneKind
		word string
	}
	passes := []pass{{"hours", laravel.BatchFinished, ""}}
	// Before 10.9 unfinished and cancelled batches are pruned when the option is truthy; from 10.9
	// whenever it is given.
	given := func(name string) bool {
		v := a.option(name)
		return a.set[name] && (v != "" && v != "0" || a.at(10, 9))
	}
	if given("unfinished") {
		passes = append(passes, pass{"unfinished", laravel.BatchUnfinished, "unfinished "})
	}
	if given("cancelled") {
		passes = append(passes, pass{"cancelled", laravel.BatchCancelled, "cancelled "})
	}
	cutoffs := make([]int64, len(passes))
	for i, p := range passes {
		h, err := hoursOption(p.opt, a.option(p.opt))
		if err != nil {
			return a.failure(err)
		}
		cutoffs[i] = time.Now().Add(-time.Duration(h) * time.Hour).Unix()
	}
	db, err := a.conn(ctx)
	if err != nil {
		return a.failure(err)
	}
	for i, p := range passes {
		var total int64
		for {
			if ctx.Err() != nil {
				return a.interrupted("deleting %d %sbatches", total, p.word)
			}
			n, err := db.BatchPrune(context.WithoutCancel(ctx), &laravel.BatchPruneParams{Kind: p.kind, Before: cutoffs[i]})
			if err != nil {
				return a.failure(err)
			}
			if n == 0 {
				break
			}
			total += n
		}
		if a.con.modern {
			a.con.info(fmt.Sprintf("%d %sentries deleted.", total, p.word))
		} else {
			a.con.info(fmt.Sprintf("%d %sentries deleted!", total, p.word))
		}
	}
	return 0
}
