package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sourceSettings reads what PHP reads from the application's config/app.php and config/queue.php
// (under appDir) when no configuration is cached: the app's timezone and cipher (strings in the file
// up to Laravel 10, which PHP reads whatever APP_TIMEZONE says), and the queue connection's table,
// queue and retry_after, the failed jobs' driver and table and the batches' table (retry_after is 90
// written in the file up to Laravel 10: an application that raised it there has PHP workers that
// wait that long before taking a reserved job again, and so must this one). Each value the files give
// as a string, a number, a boolean or env('NAME', default) (and its casts) comes back as a setting that
// covers the key: the environment's Laravel variable for it no longer counts, as in PHP. A value the
// reader cannot evaluate leaves the key to the other layers. connection is the queue connection the
// worker uses ("" for the application's default); lookup reads a variable as env() does.
//
// A retry_after or timezone the reader cannot evaluate is named in notes, with the setting to give.
func sourceSettings(appDir, connection string, lookup func(string) (string, bool)) (out []setting, covered map[string]bool, notes []string) {
	if appDir == "" {
		return nil, nil, nil
	}
	covered = map[string]bool{}
	read := func(name string) (*phpArray, string) {
		path := filepath.Join(appDir, "config", name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, path
		}
		a := readPHPConfigSource(string(b))
		if a != nil {
			evalEnv(a, lookup)
		}
		return a, path
	}
	from := func(path string, a *phpArray, where string, keys ...string) {
		v, ok := a.get(keys...)
		if _, unknown := v.(phpUnknown); ok && unknown && (path == "worker.retry_after" || path == "app.timezone") {
			notes = append(notes, fmt.Sprintf("%s: the %s written there is PHP code artisan-go does not evaluate; set %s (%s) to the value PHP computes", where, strings.Join(keys, "."), path, EnvName(path)))
		}
		if _, unknown := v.(phpUnknown); !ok || unknown {
			return
		}
		if s, isText := exportString(v); isText {
			out = append(out, setting{path: path, value: s, source: "in " + where, dir: appDir})
			covered[path] = true
		}
	}
	if app, where := read("app.php"); app != nil {
		from("app.timezone", app, where, "timezone")
		from("app.cipher", app, where, "cipher")
		from("app.maintenance_driver", app, where, "maintenance", "driver")
		from("app.maintenance_store", app, where, "maintenance", "store")
	}
	if queue, where := read("queue.php"); queue != nil {
		if connection == "" {
			if d, ok := queue.get("default"); ok {
				connection, _ = d.(string)
			}
		}
		if driver, _ := queue.get("connections", connection, "driver"); driver == "database" {
			from("tables.jobs", queue, where, "connections", connection, "table")
			from("worker.queues", queue, where, "connections", connection, "queue")
			from("worker.retry_after", queue, where, "connections", connection, "retry_after")
		}
		if v, ok := queue.get("failed", "driver"); ok && v == nil {
			out = append(out, setting{path: "failed.driver", value: "null", source: "in " + where})
			covered["failed.driver"] = true
		} else {
			from("failed.driver", queue, where, "failed", "driver")
		}
		from("tables.failed_jobs", queue, where, "failed", "table")
		from("tables.job_batches", queue, where, "batching", "table")
	}
	return out, covered, notes
}
