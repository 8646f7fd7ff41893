package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sourceSettings reads what PHP reads from the application's config files (under appDir) when no
// configuration is cached. From config/app.php and config/queue.php: the app's environment, key,
// timezone, cipher and maintenance driver and store (the timezone a string in the file up to Laravel
// 10, which PHP reads whatever APP_TIMEZONE says), the queue connection's table, queue and
// retry_after, the failed jobs' driver and table and the batches' table (retry_after is 90 written in
// the file up to Laravel 10: an application that raised it there has PHP workers that wait that long
// before taking a reserved job again, and so must this one). From config/database.php,
// config/cache.php and config/logging.php: the database connection the queue uses, the cache store,
// its prefix and tables, the Redis connections the cache uses and the log channel (a prefix or a host
// written in the file instead of read from .env). connection is the queue connection named on the
// command line ("" for the application's default), envConnection QUEUE_CONNECTION's; lookup reads a
// variable as env() does.
//
// Each key the files hold comes back as a setting that covers it: the environment's Laravel variable
// for it no longer counts, as in PHP. A value the reader cannot evaluate (PHP code other than
// strings, numbers, booleans, null, arithmetic, concatenation, env(), Str::slug, the path helpers
// and casts) is named in facts.pathNotes, with the setting to give, and leaves the key at its
// default. A retry_after the connection does not give, or gives as null, is DatabaseConnector's 60.
// files maps the keys read to their values, for a warning when a setting of ours overrides one.
func sourceSettings(appDir, connection, envConnection string, lookup func(string) (string, bool)) (out []setting, covered map[string]bool, notes []string, files map[string]string, facts sourceFacts) {
	if appDir == "" {
		return nil, nil, nil, nil, facts
	}
	covered, files = map[string]bool{}, map[string]string{}
	read := func(name string) (*phpArray, string) {
		path := filepath.Join(appDir, "config", name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, path
		}
		a := readPHPConfigSource(string(b), lookup, appDir)
		if a == nil {
			notes = append(notes, fmt.Sprintf("%s: the array it returns cannot be read (PHP code artisan-go does not evaluate before it); what it sets is read from .env instead, so check %s", path, strings.Join(fileKeys[name], ", ")))
			return nil, path
		}
		return a, path
	}
	set := func(path, value, where string) {
		out = append(out, setting{path: path, value: value, source: "in " + where, dir: appDir})
		covered[path] = true
		files[path] = value
	}
	facts.pathNotes = map[string]string{}
	unknownNote := func(path, where string, keys []string) {
		facts.pathNotes[path] = fmt.Sprintf("%s: the %s written there is PHP code artisan-go does not evaluate; set %s (%s) to the value PHP computes", where, strings.Join(keys, "."), path, EnvName(path))
		covered[path] = true // PHP does not read the Laravel variable either, unless that code does
	}
	from := func(path string, a *phpArray, where string, keys ...string) {
		v, ok, unknown := sourceGet(a, keys...)
		if unknown {
			unknownNote(path, where, keys)
			return
		}
		if !ok {
			return
		}
		if _, unknown := v.(phpUnknown); unknown {
			facts.pathNotes[path] = fmt.Sprintf("%s: the %s written there is PHP code artisan-go does not evaluate; set %s (%s) to the value PHP computes", where, strings.Join(keys, "."), path, EnvName(path))
			covered[path] = true // PHP does not read the Laravel variable either, unless that code does
			return
		}
		if b, isBool := v.(bool); isBool && path == "worker.retry_after" {
			v = map[bool]int64{false: 0, true: 1}[b] // an int to PHP's arithmetic
		}
		if s, isText := exportString(v); isText {
			set(path, s, where)
		}
	}
	if app, where := read("app.php"); app != nil {
		from("app.env", app, where, "env")
		from("app.key", app, where, "key")
		from("app.timezone", app, where, "timezone")
		from("app.cipher", app, where, "cipher")
		from("app.maintenance_driver", app, where, "maintenance", "driver")
		from("app.maintenance_store", app, where, "maintenance", "store")
		if m, ok, unknown := sourceGet(app, "maintenance"); ok && !unknown {
			if arr, isArr := m.(*phpArray); isArr && !arr.spread {
				if _, has := arr.values["store"]; !has {
					// Laravel 10's layout: MaintenanceModeManager takes the default cache store, and
					// APP_MAINTENANCE_STORE does not count.
					set("app.maintenance_store", "", where)
				}
			}
		}
	}
	queue, queueWhere := read("queue.php")
	if queue != nil {
		where := queueWhere
		if conns, ok, unknown := sourceGet(queue, "connections"); ok && !unknown {
			if arr, isArr := conns.(*phpArray); isArr && !arr.spread {
				facts.drivers, facts.driversWhere = map[string]string{}, queueWhere
				for _, name := range arr.keys {
					facts.drivers[name], _ = knownString(arr, name, "driver")
				}
			}
		}
		if connection == "" {
			// No connection named on the command line: the file's default, as PHP reads it (whatever
			// QUEUE_CONNECTION says when the file does not read it), when it is a database
			// connection; else QUEUE_CONNECTION's (a sync or redis one is refused with the reason),
			// else the worker's own.
			connection = "database"
			fromFile := false
			if d, ok := knownString(queue, "default"); ok {
				if driver, _, _ := sourceGet(queue, "connections", d, "driver"); driver == "database" {
					connection, fromFile = d, true
					set("connection", d, where)
				}
			}
			if !fromFile && envConnection != "" {
				connection = envConnection
			}
		}
		driver, _, unknown := sourceGet(queue, "connections", connection, "driver")
		if _, isCode := driver.(phpUnknown); isCode || unknown {
			for _, k := range []string{"table", "queue", "retry_after"} {
				unknownNote(map[string]string{"table": "tables.jobs", "queue": "worker.queues", "retry_after": "worker.retry_after"}[k], where, []string{"connections", connection, k})
			}
		}
		if driver == "database" {
			from("tables.jobs", queue, where, "connections", connection, "table")
			from("worker.queues", queue, where, "connections", connection, "queue")
			if v, ok, unknown := sourceGet(queue, "connections", connection, "retry_after"); !unknown && (!ok || v == nil) {
				set("worker.retry_after", "60", where) // DatabaseConnector: $config['retry_after'] ?? 60
			} else {
				from("worker.retry_after", queue, where, "connections", connection, "retry_after")
			}
		}
		if v, ok, unknown := sourceGet(queue, "failed", "driver"); !unknown && ok && v == nil {
			set("failed.driver", "null", where)
		} else if f, _, _ := sourceGet(queue, "failed"); !unknown && !ok && f != nil {
			if d, known := failedWithoutDriver(f); known {
				set("failed.driver", d, where)
			}
		} else {
			from("failed.driver", queue, where, "failed", "driver")
		}
		from("tables.failed_jobs", queue, where, "failed", "table")
		from("tables.job_batches", queue, where, "batching", "table")
	}
	// The database connection the queue uses, the cache store and the log channel, from
	// config/database.php, config/cache.php and config/logging.php: what they give as values the
	// reader evaluates; a value it does not is named in notes.
	root, rootFiles := &phpArray{values: map[string]any{}}, map[string]string{}
	for _, name := range []string{"database", "cache", "logging"} {
		if a, where := read(name + ".php"); a != nil {
			root.set(name, a)
			rootFiles[name] = where
		}
	}
	if len(rootFiles) == 0 {
		return out, covered, notes, files, facts
	}
	if queue != nil {
		root.set("queue", queue)
		rootFiles["queue"] = queueWhere
	}
	sink := &settingSink{covered: covered, dir: appDir, files: rootFiles, root: root, pathNotes: facts.pathNotes}
	dbName, ok := knownString(root, "database", "default")
	if _, read := rootFiles["database"]; read && !ok {
		notes = append(notes, fmt.Sprintf("%s: the default connection written there is PHP code artisan-go does not evaluate, so the database is read from .env (DB_CONNECTION, DB_HOST, …): set db.driver, db.host, db.database (ARTISAN_GO_DB_DRIVER, …) to the connection PHP uses", rootFiles["database"]))
	}
	if ok {
		if queue != nil {
			if c, set, unknown := sourceGet(queue, "connections", connection, "connection"); unknown || isUnknown(c) {
				ok = false
				notes = append(notes, fmt.Sprintf("%s: the database connection of the queue connection [%s] written there is PHP code artisan-go does not evaluate, so the database is read from .env (DB_CONNECTION, DB_HOST, …): set db.driver, db.host, db.database (ARTISAN_GO_DB_DRIVER, …) to the connection PHP uses", queueWhere, connection))
			} else if name, _ := exportString(c); set && name != "" && arrString(queue, "connections", connection, "driver") == "database" {
				dbName = name // Redis' is a Redis connection
			}
		}
		if ok {
			sink.where = rootFiles["database"]
			if sink.database(root, dbName) {
				facts.queueDatabase = true
				if _, cache := rootFiles["cache"]; cache {
					facts.cacheDatabase = true
					facts.problems = otherDatabases(root, dbName, filepath.Join(appDir, "config"), "")
				}
			}
		}
	}
	sink.cache(root)
	notes = append(notes, sink.notes...)
	for _, st := range sink.out {
		out = append(out, st)
		files[st.path] = st.value.(string)
	}
	return out, covered, notes, files, facts
}

// sourceFacts is what the config files say beyond settings.
type sourceFacts struct {
	// queueDatabase says the queue's database connection was read from config/database.php, and
	// cacheDatabase that the database cache store's were checked against it there too.
	queueDatabase, cacheDatabase bool
	problems                     []error // tables PHP keeps on another database
	// pathNotes name, by setting, a value the reader could not evaluate, and the setting to give;
	// one given (ARTISAN_GO_…, the YAML file) makes its note moot.
	pathNotes map[string]string
	// drivers are the drivers of config/queue.php's connections ("" where the reader does not
	// evaluate one), nil when the file does not list them all; driversWhere is the file.
	drivers      map[string]string
	driversWhere string
}

// knownString is the string (or number) at keys of a, when the file gives one the reader evaluates.
func knownString(a *phpArray, keys ...string) (string, bool) {
	v, ok, unknown := sourceGet(a, keys...)
	if !ok || unknown {
		return "", false
	}
	return exportString(v)
}

// sourceGet follows keys through a config file's arrays: the value and whether it is there, or
// unknown when an array on the way holds entries whose keys the reader could not tell (a spread, a
// constant key) or is itself code it does not evaluate.
func sourceGet(a *phpArray, keys ...string) (v any, ok, unknown bool) {
	v = a
	for _, k := range keys {
		switch arr := v.(type) {
		case *phpArray:
			if arr.spread {
				return nil, false, true
			}
			if v, ok = arr.values[k]; !ok {
				return nil, false, false
			}
		case phpUnknown:
			return nil, false, true
		default:
			return nil, false, false
		}
	}
	return v, true, false
}

// failedWithoutDriver is the failed-job provider of a queue.failed array without a driver key (the
// Laravel 5.8 layout), as QueueServiceProvider picks it: the database one when isset($config['table']),
// else the Null provider. known is false when the array is code the reader does not evaluate.
func failedWithoutDriver(failed any) (driver string, known bool) {
	arr, ok := failed.(*phpArray)
	if !ok || arr.spread {
		return "", false
	}
	if t, has := arr.values["table"]; has && t != nil {
		if isUnknown(t) {
			return "", false
		}
		return "database", true
	}
	return "null", true
}

// fileKeys are the settings each config file gives, for the note on a file that cannot be read.
var fileKeys = map[string][]string{
	"app.php":      {"app.timezone", "app.cipher", "app.maintenance_driver"},
	"queue.php":    {"worker.retry_after", "tables.jobs", "worker.queues", "failed.driver", "tables.failed_jobs"},
	"database.php": {"db.driver", "db.host", "db.database", "db.prefix", "cache.redis.prefix"},
	"cache.php":    {"cache.store", "cache.prefix", "tables.cache"},
	"logging.php":  {"log.channel"},
}
