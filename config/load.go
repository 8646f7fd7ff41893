package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/payload"
	"github.com/spf13/viper"
)

// LoadParams says where Load reads the configuration from.
type LoadParams struct {
	// EnvFile is a Laravel .env file (--env-file); "" reads none.
	EnvFile string
	// ConfigFile is a YAML file (--config); "" reads none.
	ConfigFile string
	// Environ is the process environment in os.Environ form; nil means none.
	Environ []string
	// Overrides are dotted YAML keys set by command-line flags, such as "worker.concurrency": 8.
	Overrides map[string]any
	// AppDir is the Laravel application's directory when no EnvFile gives it (the .env file's
	// directory): where its installed framework version, its cached configuration, its maintenance
	// file, its log and its file cache are found. "" for none.
	AppDir string
}

// setting is one value for one key, with where it came from.
type setting struct {
	path   string
	value  any
	source string // for messages: "DB_PORT in /app/.env"
	dir    string // directory that relative paths in the value are relative to; "" is the working directory
}

// Load reads the configuration: Default(), then the .env file, the YAML file, the process environment
// and the overrides, each layer winning over the ones before. Values that cannot be read (a port that is
// not a number, an unknown YAML key, a .env syntax error) are errors wrapping ErrInvalid, joined; the
// meaning of the values is checked by Validate.
func Load(p LoadParams) (*Config, error) {
	environ := environMap(p.Environ)
	var errs []error
	var notes []string

	var dotenv map[string]string
	dotenvDir := ""
	if p.EnvFile != "" {
		b, err := os.ReadFile(p.EnvFile)
		if err != nil {
			return nil, fmt.Errorf("read env file: %w", err)
		}
		var unclosed int
		dotenv, unclosed, err = parseDotenv(p.EnvFile, string(b), environ)
		if err != nil {
			return nil, fmt.Errorf("read env file: %w", err)
		}
		if unclosed > 0 {
			notes = append(notes, fmt.Sprintf("%s:%d: a double-quoted value is never closed, so it and every line after it are ignored, as Laravel ignores them; close the quote", p.EnvFile, unclosed))
		}
		if abs, err := filepath.Abs(p.EnvFile); err == nil {
			dotenvDir = filepath.Dir(abs)
		}
	}

	var yamlSet []setting
	if p.ConfigFile != "" {
		var err error
		yamlSet, err = readYAML(p.ConfigFile)
		if err != nil {
			return nil, err
		}
	}

	overrides := make([]setting, 0, len(p.Overrides))
	for path, v := range p.Overrides {
		k, ok := keyByPath[path]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: override %q is not a configuration key", ErrInvalid, path))
			continue
		}
		overrides = append(overrides, setting{path: k.path, value: v, source: "given on the command line"})
	}
	sort.Slice(overrides, func(i, j int) bool { return overrides[i].path < overrides[j].path })

	// The Laravel version decides which Laravel variables are read and several defaults, so it is
	// found first, by the same precedence.
	ver := parseVersion(DefaultLaravelVersion)
	picked := false
	pick := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			ver, picked = parseVersion(s), true
		}
	}
	if s, ok := dotenv[EnvName("laravel_version")]; ok {
		pick(s)
	}
	for _, s := range yamlSet {
		if s.path == "laravel_version" {
			pick(fmt.Sprint(s.value))
		}
	}
	if s, ok := environ[EnvName("laravel_version")]; ok {
		pick(s)
	}
	if v, ok := p.Overrides["laravel_version"]; ok {
		pick(fmt.Sprint(v))
	}

	// Else the application's own framework says, as `php artisan --version` does.
	var detected []setting
	appDir := dotenvDir
	if appDir == "" {
		appDir = p.AppDir
	}
	if v, where := frameworkVersion(appDir); !picked && v != "" {
		pick(v)
		detected = []setting{{path: "laravel_version", value: v, source: "in " + where}}
	}

	if _, set := dotenv["APP_PREVIOUS_KEYS"]; !ver.atLeast(11, 0) && (set || environ["APP_PREVIOUS_KEYS"] != "") {
		notes = append(notes, "APP_PREVIOUS_KEYS is read from Laravel 11 on: as PHP's worker before it, this one fails jobs encrypted with a previous key (The MAC is invalid.); set ARTISAN_GO_APP_PREVIOUS_KEYS to decrypt them anyway, or laravel_version to the application's")
	}
	envFileName := p.EnvFile
	dotenvSet, n := envSettings(dotenv, ver, "in "+envFileName, dotenvDir)
	dotenvSet = append(detected, dotenvSet...)
	notes = append(notes, n...)
	procSet, n := envSettings(environ, ver, "in the environment", "")
	notes = append(notes, n...)

	// A configuration cached by `php artisan config:cache` is what PHP reads instead of .env and the
	// environment: it replaces their Laravel variables (ours still count).
	cache, cachePath, err := readConfigCache(appDir, environ)
	if err != nil {
		return nil, err
	}
	var cacheSet []setting
	var facts cachedFacts
	if cache != nil {
		connection := ""
		if c, ok := p.Overrides["connection"]; ok {
			connection = fmt.Sprint(c)
		}
		var covered map[string]bool
		cacheSet, covered, facts = cachedSettings(cache, connection, cachePath, appDir)
		if len(facts.problems) > 0 {
			return nil, errors.Join(facts.problems...)
		}
		dotenvSet, procSet = withoutLaravel(dotenvSet, covered), withoutLaravel(procSet, covered)
	}
	var fromFiles map[string]string // what config/*.php give, without a cached configuration
	var srcFacts sourceFacts
	envNull := false // QUEUE_CONNECTION is PHP's null
	if cache == nil {
		// Without a cached configuration PHP reads config/app.php and config/queue.php, whose values
		// written there (the timezone, retry_after up to Laravel 10) win over the environment's
		// variables; env() in them reads the process environment first, then .env, as PHP does.
		lookup := func(name string) (string, bool) {
			if v, ok := environ[name]; ok {
				return v, true
			}
			v, ok := dotenv[name]
			return v, ok
		}
		connection, envConnection := "", ""
		if c, ok := p.Overrides["connection"]; ok {
			connection = fmt.Sprint(c)
		} else {
			for _, name := range []string{"QUEUE_CONNECTION", "QUEUE_DRIVER"} {
				if v, ok := lookup(name); ok && envConnection == "" {
					var defined bool
					if envConnection, defined = laravelEnvValue(v); !defined {
						envConnection, envNull = "null", true // QueueManager reads a null connection as the null driver
					}
				}
			}
		}
		var covered map[string]bool
		var n []string
		cacheSet, covered, n, fromFiles, srcFacts = sourceSettings(appDir, connection, envConnection, lookup)
		if len(srcFacts.problems) > 0 {
			return nil, errors.Join(srcFacts.problems...)
		}
		notes = append(notes, n...)
		dotenvSet, procSet = withoutLaravel(dotenvSet, covered), withoutLaravel(procSet, covered)
	}
	layers := [][]setting{dotenvSet, cacheSet, yamlSet, procSet, overrides}
	typed := make([][]setting, len(layers))
	winner := map[string]setting{}
	for i, layer := range layers {
		for _, s := range layer {
			raw := s.value
			if text, ok := raw.(string); ok && s.path == "worker.queues" {
				raw = markEmptyQueues(text)
			}
			v, err := convert(keyByPath[s.path].typ, raw)
			if q, ok := v.([]string); ok && len(q) == 0 && s.path == "worker.queues" {
				// An empty --queue falls back to the connection's queue, as `queue:work` does.
				continue
			}
			if errors.Is(err, errUnset) {
				continue
			}
			if err != nil {
				errs = append(errs, &FieldError{Field: s.path, Source: s.source, Problem: err.Error()})
				continue
			}
			s.value = v
			typed[i] = append(typed[i], s)
			winner[s.path] = s
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	cfg, err := merge(typed)
	if err != nil {
		return nil, err
	}
	cfg.notes = notes
	cfg.envFile = p.EnvFile
	if cache != nil {
		cfg.cachedConfig = cachePath
		cfg.drivers, cfg.driversWhere = facts.connections, "the cached configuration ("+cachePath+")"
	} else if srcFacts.drivers != nil {
		cfg.drivers, cfg.driversWhere = srcFacts.drivers, srcFacts.driversWhere
		if ver.atLeast(11, 0) {
			// Laravel 11 merges the framework's queue connections into the application's.
			for _, name := range append([]string{"database"}, skeletonConnections...) {
				if _, ok := cfg.drivers[name]; !ok && name != "null" {
					cfg.drivers[name] = name
				}
			}
		}
	}
	cfg.sources = make(map[string]string, len(winner))
	for path, s := range winner {
		cfg.sources[path] = s.source
	}
	if _, ok := p.Overrides["connection"]; ok {
		// queue:work's connection argument: Validate checks that the application has it.
		cfg.configured = "database"
		for _, layer := range typed[:4] {
			for _, s := range layer {
				if s.path == "connection" {
					cfg.configured = fmt.Sprint(s.value)
				}
			}
		}
	}
	for _, vars := range []map[string]string{dotenv, environ} {
		if raw, ok := vars["DB_QUEUE"]; ok && cache == nil {
			if v, defined := laravelEnvValue(raw); defined && strings.TrimSpace(v) != "" {
				cfg.defaultQueue = strings.TrimSpace(v)
			}
		}
	}
	for _, s := range cacheSet {
		if q, ok := s.value.(string); ok && s.path == "worker.queues" && q != "" {
			cfg.defaultQueue = q // the connection's queue, as PHP's dispatch() uses it
		}
	}
	if v, ok := fromFiles["worker.retry_after"]; ok {
		if s := winner["worker.retry_after"]; s.source != "" && !strings.Contains(s.source, "config/queue.php") {
			if file, err := convert(keyByPath["worker.retry_after"].typ, v); err == nil && file != any(cfg.Worker.RetryAfter) {
				notes = append(notes, fmt.Sprintf("worker.retry_after %v (%s) is not config/queue.php's %v, which PHP's workers use: a job one side holds longer than the shorter of the two is taken again by the other", cfg.Worker.RetryAfter, s.source, file))
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(srcFacts.pathNotes)) {
		if _, given := winner[path]; !given {
			notes = append(notes, srcFacts.pathNotes[path])
			cfg.unevaluated = append(cfg.unevaluated, path)
		}
	}
	cfg.notes = notes
	cfg.nullConnection = envNull || facts.nullConnection
	deriveDefaults(cfg, winner, appDir)
	if cache == nil {
		if err := checkQueueDatabase(cfg, ver, dotenv, environ, srcFacts); err != nil {
			return nil, err
		}
	}
	for i, q := range cfg.Worker.Queues {
		if q == emptyQueue {
			cfg.Worker.Queues[i] = cfg.DefaultQueue()
		}
	}
	return cfg, nil
}

// checkQueueDatabase checks DB_QUEUE_CONNECTION, which names the database connection of the queue
// in config/queue.php from Laravel 11 on, and DB_CACHE_CONNECTION and DB_CACHE_LOCK_CONNECTION, those
// of the database cache store, when no cached configuration says what they are and the config files
// did not (an application that does not publish config/database.php). A connection of the skeleton
// reads the same DB_* variables as DB_CONNECTION's: the same database when both are MySQL or MariaDB,
// or both the same driver. Any other is refused: its settings are in the framework's
// config/database.php, and the worker reaches one database.
func checkQueueDatabase(c *Config, ver version, dotenv, environ map[string]string, files sourceFacts) error {
	lookup := func(name string) string {
		value := ""
		for _, vars := range []map[string]string{dotenv, environ} { // the environment wins, as phpdotenv leaves it
			if raw, ok := vars[name]; ok {
				v, defined := laravelEnvValue(raw)
				value = strings.TrimSpace(v)
				if !defined {
					value = ""
				}
			}
		}
		return value
	}
	family := func(driver string) string {
		if driver == "mariadb" {
			return "mysql"
		}
		return driver
	}
	check := func(variable, what string) error {
		name := lookup(variable)
		switch {
		case name == "":
			return nil
		case !ver.atLeast(11, 0):
			c.notes = append(c.notes, fmt.Sprintf("%s is %q, but Laravel's skeleton reads it from 11 on, and artisan-go uses DB_CONNECTION's database: if the application's configuration reads it, run php artisan config:cache, so that artisan-go reads the connection from bootstrap/cache/config.php", variable, name))
			return nil
		case !oneOf(name, []string{"mysql", "mariadb", "pgsql", "sqlite"}):
			return fmt.Errorf("%w: %s names the database connection [%s], whose settings are in config/database.php, not in .env: run php artisan config:cache, so that artisan-go reads them from bootstrap/cache/config.php, or set db.host, db.database and the others (ARTISAN_GO_DB_HOST, …) to that connection's and unset %s",
				ErrInvalid, variable, name, variable)
		case family(name) != family(c.DB.Driver):
			return fmt.Errorf("%w: %s=%s puts %s on the %s database connection, while the worker uses DB_CONNECTION's (%s) for the rest: artisan-go reaches one database; unset %s, or set DB_CONNECTION=%s",
				ErrInvalid, variable, name, what, name, c.DB.Driver, variable, name)
		}
		return nil
	}
	if !files.queueDatabase {
		if err := check("DB_QUEUE_CONNECTION", "the jobs"); err != nil {
			return err
		}
	}
	if c.Cache.Store != "database" || files.cacheDatabase {
		return nil
	}
	if err := check("DB_CACHE_CONNECTION", "the database cache store"); err != nil {
		return err
	}
	return check("DB_CACHE_LOCK_CONNECTION", "the database cache store's locks")
}

// emptyQueue stands for an empty name in a list of queues until the connection's queue is known.
const emptyQueue = "\x00"

// markEmptyQueues marks the empty names of a comma-separated list of queues (--queue=high,,low): PHP's
// worker pops each name, and the database queue takes an empty one as the connection's queue. A list
// with no name at all is left as it is (the connection's queue, as no list).
func markEmptyQueues(text string) string {
	if strings.TrimSpace(text) == "" {
		return text
	}
	parts := strings.Split(text, ",")
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			parts[i] = emptyQueue
		}
	}
	return strings.Join(parts, ",")
}

// withoutLaravel drops the settings of Laravel's variables for the keys a cached configuration covers.
func withoutLaravel(set []setting, covered map[string]bool) []setting {
	out := set[:0:0]
	for _, s := range set {
		if !covered[s.path] || strings.HasPrefix(s.source, "ARTISAN_GO_") {
			out = append(out, s)
		}
	}
	return out
}

// merge layers the typed settings over Default() with viper: the defaults as viper's defaults, the
// three files (.env, the cached configuration, YAML) as merged configuration, the environment and the
// overrides as explicit sets, in that order, and decodes the result.
func merge(layers [][]setting) (*Config, error) {
	v := viper.New()
	def := Default()
	dv := reflect.ValueOf(def)
	for _, k := range keys {
		v.SetDefault(k.path, dv.FieldByIndex(k.index).Interface())
	}
	for i, layer := range layers {
		if i < 3 {
			if err := v.MergeConfigMap(nest(layer)); err != nil {
				return nil, fmt.Errorf("merge configuration: %w", err)
			}
			continue
		}
		for _, s := range layer {
			v.Set(s.path, s.value)
		}
	}
	var cfg Config
	if err := v.Unmarshal(&cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &cfg, nil
}

// nest turns dotted settings into the nested map viper merges.
func nest(ss []setting) map[string]any {
	root := map[string]any{}
	for _, s := range ss {
		m := root
		parts := strings.Split(s.path, ".")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = s.value
	}
	return root
}

func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// envSettings turns variables (from a .env file or the process environment) into settings: Laravel's
// names first, then ours, which win. ARTISAN_GO_ names that are not keys are returned as notes.
func envSettings(vars map[string]string, ver version, where, dir string) ([]setting, []string) {
	var out []setting
	names := laravelNames(ver)
	for _, k := range keys {
		for _, name := range names[k.path] {
			raw, ok := vars[name]
			if !ok {
				continue
			}
			val, defined := laravelEnvValue(raw)
			if !defined && k.path == "failed.driver" {
				// A null failed driver is Laravel's Null provider, not the default.
				val, defined = "null", true
			}
			if !defined && k.path == "connection" {
				// A null connection is the Null queue to Laravel's QueueManager, not the default.
				val, defined = "null", true
			}
			if !defined && k.path == "worker.retry_after" {
				val, defined = "0", true // (int) null
			}
			if !defined {
				continue
			}
			if k.path == "worker.retry_after" {
				// The skeleton reads it as (int) env('DB_QUEUE_RETRY_AFTER', 90): "90.5" is 90, "" 0.
				val = strconv.FormatInt(phpIntCast(val), 10)
			}
			out = append(out, setting{path: k.path, value: val, source: name + " " + where, dir: dir})
			break
		}
	}
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !strings.HasPrefix(name, "ARTISAN_GO_") {
			continue
		}
		path, ok := ourEnv[name]
		if !ok {
			if !foreignEnv[name] {
				hint := ""
				if c := closest(name, slices.Sorted(maps.Keys(ourEnv))); c != "" {
					hint = fmt.Sprintf(" (did you mean %s?)", c)
				}
				notes = append(notes, fmt.Sprintf("%s %s is not a configuration variable%s", name, where, hint))
			}
			continue
		}
		out = append(out, setting{path: path, value: vars[name], source: name + " " + where, dir: dir})
	}
	return out, notes
}

// readYAML reads the YAML file with viper and flattens it into settings, rejecting keys that are not
// configuration keys (to catch typos).
func readYAML(path string) ([]setting, error) {
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		var pe viper.ConfigParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("read config file %s: %w: %w", path, ErrInvalid, err)
		}
		return nil, fmt.Errorf("read config file: %w", err)
	}
	dir := ""
	if abs, err := filepath.Abs(path); err == nil {
		dir = filepath.Dir(abs)
	}
	var out []setting
	var errs []error
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			val := m[name]
			p := prefix + strings.ToLower(name)
			if sections[p] {
				sub, ok := val.(map[string]any)
				if !ok && val != nil {
					errs = append(errs, &FieldError{Field: p, Source: path,
						Problem: fmt.Sprintf("is a section, got %s", describe(val)),
						Fix:     "write its keys under it: " + strings.Join(knownKeys(p), ", ")})
					continue
				}
				walk(p+".", sub)
				continue
			}
			if _, ok := keyByPath[p]; !ok {
				section := strings.TrimSuffix(prefix, ".")
				hint := ""
				if c := closest(strings.ToLower(name), knownKeys(section)); c != "" {
					hint = fmt.Sprintf("did you mean %q? ", c)
				} else if full := keyElsewhere(strings.ToLower(name)); full != "" {
					hint = fmt.Sprintf("did you mean %s (%q under %s)? ", full, name, strings.TrimSuffix(full, "."+strings.ToLower(name)))
				}
				where := "at the top level"
				if section != "" {
					where = "under " + section
				}
				errs = append(errs, &FieldError{Field: p, Source: path, Problem: "unknown key",
					Fix: fmt.Sprintf("%sthe keys %s are %s", hint, where, strings.Join(knownKeys(section), ", "))})
				continue
			}
			if val == nil {
				continue
			}
			out = append(out, setting{path: p, value: val, source: path, dir: dir})
		}
	}
	walk("", v.AllSettings())
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// frameworkVersionRE finds Laravel's version in Illuminate\Foundation\Application.
var frameworkVersionRE = regexp.MustCompile(`(?m)^\s*const VERSION = '(\d+\.\d+[^']*)';`)

// frameworkVersion reads the version of the Laravel framework installed with the application whose
// base directory is dir (vendor/laravel/framework, as Composer installs it), and the file it read; ""
// when there is none.
func frameworkVersion(dir string) (string, string) {
	if dir == "" {
		return "", ""
	}
	path := filepath.Join(dir, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	m := frameworkVersionRE.FindSubmatch(b)
	if m == nil {
		return "", ""
	}
	return string(m[1]), path
}

// deriveDefaults replaces the defaults that depend on the Laravel version, the driver or the app name
// when no layer set them, and resolves a relative sqlite path.
func deriveDefaults(c *Config, set map[string]setting, baseDir string) {
	ver := parseVersion(c.LaravelVersion)
	unset := func(path string) bool { _, ok := set[path]; return !ok }
	if unset("worker.maintenance_file") && baseDir != "" {
		// php artisan down (the file driver, every version's default) writes storage/framework/down
		// next to the .env file.
		c.Worker.MaintenanceFile = filepath.Join(baseDir, "storage", "framework", "down")
	}
	if s, ok := set["log.laravel_file"]; ok {
		if c.Log.LaravelFile != "off" {
			c.Log.LaravelFile = relativeTo(c.Log.LaravelFile, s.dir)
		}
	} else if baseDir != "" {
		// config/logging.php's storage_path('logs/laravel.log'), next to the .env file.
		switch c.Log.Channel {
		case "stack", "single":
			c.Log.LaravelFile = filepath.Join(baseDir, "storage", "logs", "laravel.log")
		case "daily":
			c.Log.LaravelFile = filepath.Join(baseDir, "storage", "logs", "laravel-{date}.log")
		}
	}
	if s, ok := set["cache.file.path"]; ok {
		c.Cache.File.Path = relativeTo(c.Cache.File.Path, s.dir)
	} else if baseDir != "" {
		// config/cache.php's storage_path('framework/cache/data'), next to the .env file.
		c.Cache.File.Path = filepath.Join(baseDir, "storage", "framework", "cache", "data")
	}
	if s, ok := set["cache.file.lock_path"]; ok {
		c.Cache.File.LockPath = relativeTo(c.Cache.File.LockPath, s.dir)
	}
	if tz, ok := resolveTimezone(c.App.Timezone); ok {
		c.App.Timezone = tz
	} else {
		// PHP's date_default_timezone_set refuses it with a notice and the application runs in UTC.
		c.notes = append(c.notes, fmt.Sprintf("app.timezone %q is not a time zone: as PHP, which refuses it with a notice, the worker uses UTC; set APP_TIMEZONE (config/app.php's timezone) to a zone such as Europe/Paris", c.App.Timezone))
		c.App.Timezone = "UTC"
	}
	if tz := c.Log.OutputTimezone; tz != "" {
		if resolved, ok := resolveTimezone(tz); ok {
			c.Log.OutputTimezone = resolved
		} else {
			c.notes = append(c.notes, fmt.Sprintf("log.output_timezone %q is not a time zone: the times queue:work prints are in the app's zone; set queue.output_timezone (config/queue.php) or log.output_timezone to a zone such as Europe/Paris", tz))
			c.Log.OutputTimezone = ""
		}
	}
	applyDatabaseURL(c, set)
	for path, f := range map[string]*string{"db.sslrootcert": &c.DB.SSLRootCert, "db.sslcert": &c.DB.SSLCert, "db.sslkey": &c.DB.SSLKey, "db.ssl_ca": &c.DB.SSLCA} {
		// libpq reads a relative file from PHP's working directory, the application's, where
		// php artisan runs.
		if s, ok := set[path]; ok && *f != "" {
			*f = relativeTo(*f, s.dir)
		}
	}
	if unset("db.driver") && ver.atLeast(11, 0) {
		c.DB.Driver = "sqlite"
	}
	if unset("db.port") {
		switch c.DB.Driver {
		case "pgsql":
			c.DB.Port = 5432
		case "sqlite":
			c.DB.Port = 0
		default:
			c.DB.Port = 3306
		}
	}
	if unset("db.prefix_indexes") && c.DB.Prefix != "" {
		c.DB.PrefixIndexes = c.DB.Driver != "sqlite"
	}
	if unset("db.username") && ver.atLeast(11, 0) {
		c.DB.Username = "root"
	}
	if c.DB.Driver == "sqlite" {
		if s, ok := set["db.database"]; ok {
			c.DB.Database = sqlitePath(c.DB.Database, s.dir)
		} else {
			if baseDir == "" {
				baseDir, _ = os.Getwd()
			}
			c.DB.Database = filepath.Join(baseDir, "database", "database.sqlite")
		}
	} else if unset("db.database") && ver.atLeast(11, 0) {
		c.DB.Database = "laravel"
	}
	if unset("worker.tries") && !ver.atLeast(6, 0) {
		c.Worker.Tries = 0
	}
	if unset("failed.driver") && !ver.atLeast(8, 0) {
		c.Failed.Driver = "database"
	}
	if unset("cache.store") && ver.atLeast(11, 0) {
		c.Cache.Store = "database"
	}
	// The skeleton hyphenates the cache and Redis prefixes from its June 2025 release on, which
	// ships with framework 12.20; an application created earlier keeps the underscores (a note
	// says so). From 11.0 Laravel merges its own config files into the application's: a prefix that
	// the application's files do not give (no cache.php, or one without a prefix; no database.php, or
	// one without redis) is the framework's, which kept the underscores until 13.0: that is no guess.
	hyphens := ver.atLeast(12, 20)
	cacheHyphens, redisHyphens := hyphens, hyphens
	cacheGuessed := hyphens
	merged := ver.atLeast(11, 0) && hasConfigDir(baseDir)
	if merged && !slices.Contains(c.unevaluated, "cache.prefix") {
		cacheHyphens, cacheGuessed = ver.atLeast(13, 0), false
	}
	if merged && !slices.Contains(c.unevaluated, "cache.redis.prefix") {
		redisHyphens = ver.atLeast(13, 0)
	}
	if unset("app.maintenance_store") && ver.atLeast(11, 0) {
		// The framework's config/app.php (and the skeleton's): env('APP_MAINTENANCE_STORE', 'database').
		c.App.MaintenanceStore = "database"
	}
	if unset("cache.prefix") {
		switch {
		case cacheHyphens:
			c.Cache.Prefix = slug(c.App.Name, '-') + "-cache-"
		case ver.atLeast(9, 0):
			c.Cache.Prefix = slug(c.App.Name, '_') + "_cache_"
		case ver.atLeast(5, 5):
			c.Cache.Prefix = slug(c.App.Name, '_') + "_cache"
		default:
			c.Cache.Prefix = "laravel"
		}
	}
	if unset("cache.redis.db") && !ver.atLeast(5, 7) {
		c.Cache.Redis.DB = 0
	}
	if unset("cache.redis.lock_db") && !ver.atLeast(8, 0) {
		c.Cache.Redis.LockDB = c.Cache.Redis.DB
	}
	if u, err := parseRedisURL(c.Cache.Redis.URL); err == nil && u != nil {
		u.apply(&c.Cache.Redis)
	}
	if unset("cache.redis.prefix") {
		switch {
		case redisHyphens:
			c.Cache.Redis.Prefix = slug(c.App.Name, '-') + "-database-"
		case ver.atLeast(5, 8):
			c.Cache.Redis.Prefix = slug(c.App.Name, '_') + "_database_"
		default:
			c.Cache.Redis.Prefix = ""
		}
	}
	var derived []string // prefixes derived from the application's name, not read
	for _, d := range []struct{ path, value string }{{"cache.prefix", c.Cache.Prefix}, {"cache.redis.prefix", c.Cache.Redis.Prefix}} {
		if unset(d.path) && !slices.Contains(c.unevaluated, d.path) { // one the files' code gives is noted already
			derived = append(derived, fmt.Sprintf("%s %q", d.path, d.value))
		}
	}
	if _, exact := slugExact(c.App.Name, '_'); !exact && len(derived) > 0 {
		c.notes = append(c.notes, fmt.Sprintf("app.name %q has letters Laravel transliterates with tables artisan-go does not have, so the derived %s may differ from the application's: set CACHE_PREFIX (and REDIS_PREFIX) explicitly", c.App.Name, strings.Join(derived, " and ")))
	}
	if cacheGuessed && unset("cache.prefix") && !slices.Contains(c.unevaluated, "cache.prefix") {
		c.notes = append(c.notes, fmt.Sprintf("cache.prefix is %q, the default of applications created from the Laravel 12 skeleton of June 2025 or later; an application created earlier uses %q: set CACHE_PREFIX to what config/cache.php gives", c.Cache.Prefix, slug(c.App.Name, '_')+"_cache_"))
	}
}

// hasConfigDir reports whether the application in dir has its config directory, whose files (and,
// from Laravel 11, the framework's merged into them) decide what they set.
func hasConfigDir(dir string) bool {
	if dir == "" {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "config"))
	return err == nil && st.IsDir()
}

// keyElsewhere finds the one key whose last part is name ("concurrency": worker.concurrency), for a key
// written outside its section; "" when none or several are.
func keyElsewhere(name string) string {
	found := ""
	for path := range keyByPath {
		if strings.HasSuffix(path, "."+name) {
			if found != "" {
				return ""
			}
			found = path
		}
	}
	return found
}

// relativeTo resolves a relative path against dir (the directory of the file that set it; the working
// directory when dir is "").
func relativeTo(p, dir string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if dir == "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	return filepath.Join(dir, p)
}

// sqlitePath resolves a relative sqlite path as relativeTo does, keeping ":memory:" and "file:" URIs
// as they are.
func sqlitePath(p, dir string) string {
	if p == ":memory:" || strings.HasPrefix(p, "file:") {
		return p
	}
	return relativeTo(p, dir)
}

// zoneinfoDir is where the system's time zone files are, searched for a zone named in other case.
var zoneinfoDir = "/usr/share/zoneinfo"

// resolveTimezone returns the zone name as Go loads it for a name PHP accepts: PHP's zone names are
// not case-sensitive ("utc", "europe/paris"). ok is false for a name that is no zone.
func resolveTimezone(name string) (string, bool) {
	if name == "" || name == "Local" {
		return "", false
	}
	if _, err := time.LoadLocation(name); err == nil {
		return name, true
	}
	if up := strings.ToUpper(name); up != name {
		if _, err := time.LoadLocation(up); err == nil {
			return up, true
		}
	}
	found := ""
	_ = filepath.WalkDir(zoneinfoDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipDir
		}
		if rel, _ := filepath.Rel(zoneinfoDir, p); !d.IsDir() && strings.EqualFold(filepath.ToSlash(rel), name) {
			if _, err := time.LoadLocation(filepath.ToSlash(rel)); err == nil {
				found = filepath.ToSlash(rel)
			}
		}
		return nil
	})
	return found, found != ""
}

// phpIntCast is PHP's (int) of an env() value: its leading number truncated toward zero ("90.7" 90,
// "1e3" 1000, "90s" 90), 1 for true, 0 for anything else.
func phpIntCast(s string) int64 {
	if s == "true" {
		return 1
	}
	f := payload.FloatCast(s)
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64 // a string past the integers saturates, as PHP's cast of it does
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
