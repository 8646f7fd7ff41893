package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
	"github.com/jmoiron/sqlx"
)

// propFlag collects repeated name=value options of one visibility, in order.
type propFlag struct {
	vis   payload.Visibility
	props *[]pushProp
}

type pushProp struct {
	name, value string
	vis         payload.Visibility
}

func (f propFlag) String() string { return "" }

func (f propFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: write name=value", s)
	}
	*f.props = append(*f.props, pushProp{name: name, value: value, vis: f.vis})
	return nil
}

func runQueuePush(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queue:push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envFile := fs.String("env-file", "", "a Laravel .env file to read (DB_*, APP_KEY, ...)")
	configFile := fs.String("config", "", "a YAML configuration file")
	var props []pushProp
	fs.Var(propFlag{payload.Public, &props}, "prop", "a public property, name=value (repeatable); the value is read as JSON when it is valid JSON (7, true, null, [1,2], \"7\"), else as a string")
	fs.Var(propFlag{payload.Protected, &props}, "protected", "a protected property, name=value (repeatable)")
	fs.Var(propFlag{payload.Private, &props}, "private", "a private property of the class, name=value (repeatable)")
	jsonProps := fs.String("json", "", `public properties as a JSON object, e.g. '{"orderId":7,"tags":["a"]}'`)
	queue := fs.String("queue", "", "the queue (default: the connection's default queue)")
	delay := fs.Int("delay", 0, "seconds before the job is available")
	tries := fs.Int("tries", 0, "the job's tries (0: the worker's --tries)")
	backoff := fs.String("backoff", "", "the job's backoff in seconds, comma-separated per attempt")
	timeout := fs.Int("timeout", 0, "the job's timeout in seconds (0: the worker's --timeout)")
	maxExceptions := fs.Int("max-exceptions", 0, "the job's maxExceptions (0: none)")
	encrypt := fs.Bool("encrypt", false, "encrypt the command with APP_KEY, as for a ShouldBeEncrypted job")
	unique := fs.Bool("unique", false, "dispatch as a ShouldBeUnique job: take its lock in the app's cache store first, and queue nothing while another job holds it")
	uniqueID := fs.String("unique-id", "", "the job's uniqueId() with --unique (default: its uniqueId property)")
	uniqueFor := fs.Int("unique-for", 0, "seconds the unique lock lasts at most with --unique (default: its uniqueFor property; 0 until the job has run)")
	retryUntil := fs.Int("retry-until", 0, "seconds from now until which the job is retried, as its retryUntil() (0: none)")
	connection := fs.String("connection", "", "the queue connection to push onto, as ->onConnection() (default: QUEUE_CONNECTION); a database one")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: artisan-go queue:push 'App\Jobs\Class' [options]`)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, symfonyOptionsHelp)
	}
	var classes []string
	if err := parseWithPositional(fs, args, func(arg string) { classes = append(classes, arg) }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(classes) != 1 {
		fmt.Fprintln(stderr, `artisan-go queue:push: give exactly one job class, e.g. artisan-go queue:push 'App\Jobs\SendInvoice' --prop invoiceId=7`)
		return 2
	}
	cmd, err := buildCommand(classes[0], props, *jsonProps)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: %v\n", err)
		return 2
	}
	if !*unique && (*uniqueID != "" || *uniqueFor != 0) {
		fmt.Fprintln(stderr, "artisan-go queue:push: --unique-id and --unique-for go with --unique, which takes the unique lock")
		return 2
	}
	if *retryUntil < 0 {
		fmt.Fprintln(stderr, "artisan-go queue:push: --retry-until is a number of seconds from now, not negative")
		return 2
	}
	job := dispatch.Job{
		Command: cmd, Queue: *queue, Connection: *connection, Delay: time.Duration(*delay) * time.Second, Tries: *tries,
		Timeout: time.Duration(*timeout) * time.Second, MaxExceptions: *maxExceptions, Encrypt: *encrypt,
		Unique: *unique, UniqueID: *uniqueID, UniqueFor: time.Duration(*uniqueFor) * time.Second,
	}
	if *retryUntil > 0 {
		job.RetryUntil = time.Now().Add(time.Duration(*retryUntil) * time.Second)
	}
	if job.Backoff, err = parseInts(*backoff); err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: --backoff: %v\n", err)
		return 2
	}

	var overrides map[string]any
	if *connection != "" {
		overrides = map[string]any{"connection": *connection}
	}
	cfg, err := loadConfig(ctx, *envFile, *configFile, overrides)
	if err == nil {
		err = cfg.CheckPushable()
	}
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: %v\n", err)
		return 1
	}
	conn, err := openConn(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: %v\n", err)
		return 1
	}
	defer conn.Close()
	// The connection's queue (DB_QUEUE, else "default"), as PHP's dispatch() uses it, not the queues
	// a worker is told to work.
	p := dispatch.Params{LaravelVersion: cfg.LaravelVersion, DefaultQueue: cfg.DefaultQueue()}
	if *encrypt { // as PHP's dispatch(), which needs the encrypter only for a job it encrypts
		if p.Keyring, err = payload.NewKeyring(cfg.App.Key, cfg.App.PreviousKeys, cfg.App.Cipher); err != nil {
			fmt.Fprintf(stderr, "artisan-go queue:push: --encrypt: APP_KEY: %v\n", err)
			return 1
		}
	}
	if *unique {
		locks, closeLocks, err := dispatchLocks(ctx, cfg, conn)
		if err != nil {
			fmt.Fprintf(stderr, "artisan-go queue:push: --unique: %v\n", err)
			return 1
		}
		defer closeLocks()
		p.Locks = locks
	}
	d, err := dispatch.ForConn(conn, p)
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: %v\n", err)
		return 1
	}
	// In a transaction: the database store's unique lock is taken in it, with the row.
	var res *dispatch.Dispatched
	err = conn.InTx(ctx, func(tx *sqlx.Tx) (err error) {
		res, err = d.Dispatch(ctx, tx, job)
		return err
	})
	if errors.Is(err, dispatch.ErrDuplicate) {
		fmt.Fprintf(stdout, "Not pushed: %v\n", err) // PHP's dispatch() of a duplicate is no error either
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "artisan-go queue:push: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Pushed %s onto %q: id %d, uuid %s\n", cmd.Class, res.Queue, res.ID, res.UUID)
	if p := cmd.Prop("uniqueId"); *unique && *uniqueID == "" && (p == nil || p.Visibility != payload.Public) {
		fmt.Fprintf(stderr, "artisan-go queue:push: note: the unique lock is %s's with an empty unique id; if the class has a uniqueId() method, "+
			"PHP's worker releases the lock of the id it returns and this one stays until it expires: give that id with --unique-id\n", cmd.Class)
	}
	return 0
}

// dispatchLocks returns the application cache store's locks, where a unique job's dispatch takes its
// lock, and what closes them.
func dispatchLocks(ctx context.Context, cfg *config.Config, conn *laravel.Conn) (dispatch.LockStore, func(), error) {
	if cfg.Cache.Store == "database" {
		return conn, func() {}, nil
	}
	cs, err := openCacheStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if cs != nil {
		if l, ok := cs.locks.(dispatch.LockStore); ok {
			return l, cs.close, nil
		}
		cs.close()
	}
	return nil, nil, fmt.Errorf("the cache store %q (CACHE_DRIVER, CACHE_STORE) keeps no locks artisan-go can take; PHP's dispatch() takes the unique lock there: use the database, redis, file or memcached store", cfg.Cache.Store)
}

// buildCommand makes the job object from the class, the --json object and the name=value options,
// which win over --json.
func buildCommand(class string, props []pushProp, jsonProps string) (*payload.Object, error) {
	class = strings.TrimPrefix(class, `\`)
	if class == "" {
		return nil, errors.New("the job class is empty")
	}
	cmd := payload.NewObject(class)
	if jsonProps != "" {
		v, err := dispatch.FromJSON([]byte(jsonProps))
		if err != nil {
			return nil, fmt.Errorf("--json: %w", err)
		}
		obj, ok := v.(*payload.Array)
		if !ok || (obj.Len() > 0 && obj.IsList()) {
			return nil, errors.New(`--json: want a JSON object of property names, e.g. '{"orderId":7}'`)
		}
		for _, e := range obj.Entries {
			cmd.Set(fmt.Sprint(e.Key), e.Value)
		}
	}
	seen := map[string]payload.Visibility{}
	for _, p := range props {
		if vis, ok := seen[p.name]; ok && vis != p.vis {
			return nil, fmt.Errorf("the property %q is given twice, with two visibilities; give it once", p.name)
		}
		seen[p.name] = p.vis
		v, err := dispatch.FromJSON([]byte(p.value))
		if err != nil {
			v = p.value // not JSON: the text itself
		}
		switch p.vis {
		case payload.Protected:
			cmd.SetProtected(p.name, v)
		case payload.Private:
			cmd.SetPrivate(class, p.name, v)
		default:
			cmd.Set(p.name, v)
		}
	}
	return cmd, nil
}

func parseInts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number of seconds; write e.g. 10,30,60", part)
		}
		out = append(out, n)
	}
	return out, nil
}
