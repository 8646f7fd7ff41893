package config

import (
	"reflect"
	"sort"
	"strings"
)

// key is one settable leaf of Config: its dotted YAML path and Go type.
type key struct {
	path  string
	typ   reflect.Type
	index []int // field index path into Config
}

// keys lists every leaf of Config, in declaration order; sections are not leaves, routes is one.
var keys = collectKeys(reflect.TypeFor[Config](), "", nil)

// keyByPath indexes keys by path.
var keyByPath = func() map[string]key {
	m := make(map[string]key, len(keys))
	for _, k := range keys {
		m[k.path] = k
	}
	return m
}()

// sections are the paths of the struct-valued keys (db, worker, cache.redis, ...).
var sections = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		p := k.path
		for {
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				break
			}
			p = p[:i]
			m[p] = true
		}
	}
	return m
}()

func collectKeys(t reflect.Type, prefix string, index []int) []key {
	var out []key
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if !f.IsExported() || tag == "" {
			continue
		}
		path := prefix + tag
		idx := append(append([]int(nil), index...), i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[Route]() && f.Type != reflect.TypeFor[Model]() && f.Type != reflect.TypeFor[UniqueVia]() {
			out = append(out, collectKeys(f.Type, path+".", idx)...)
			continue
		}
		out = append(out, key{path: path, typ: f.Type, index: idx})
	}
	return out
}

// yamlOnly reports whether a key is a list set only in the YAML file (routes, models, unique_via,
// rate_limiters).
func yamlOnly(path string) bool {
	return strings.HasPrefix(path, "routes") || strings.HasPrefix(path, "models") || strings.HasPrefix(path, "unique_via") || strings.HasPrefix(path, "rate_limiters")
}

// EnvName returns our environment variable for a dotted key: ARTISAN_GO_ and the key in upper case,
// dots as underscores (worker.retry_after is ARTISAN_GO_WORKER_RETRY_AFTER).
func EnvName(path string) string {
	return "ARTISAN_GO_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// ourEnv maps our environment variable names to keys. Routes cannot be set from the environment.
var ourEnv = func() map[string]string {
	m := map[string]string{}
	for _, k := range keys {
		if !yamlOnly(k.path) {
			m[EnvName(k.path)] = k.path
		}
	}
	return m
}()

// foreignEnv are ARTISAN_GO_ variables that are not configuration keys but are known to exist
// (the test environment's), so they raise no warning.
var foreignEnv = map[string]bool{
	"ARTISAN_GO_REQUIRE_ALL": true,
	"ARTISAN_GO_MYSQL_DSN":   true,
	"ARTISAN_GO_PGSQL_DSN":   true,
}

// laravelNames returns Laravel's environment variables for each key, first one winning, for a Laravel
// version: the cache store is CACHE_STORE from 11 on and CACHE_DRIVER before, and the Redis cache
// database REDIS_CACHE_DB from 5.7 on and REDIS_DB before.
func laravelNames(v version) map[string][]string {
	m := map[string][]string{
		"connection":               {"QUEUE_CONNECTION", "QUEUE_DRIVER"},
		"db.driver":                {"DB_CONNECTION"},
		"db.host":                  {"DB_HOST"},
		"db.port":                  {"DB_PORT"},
		"db.database":              {"DB_DATABASE"},
		"db.username":              {"DB_USERNAME"},
		"db.password":              {"DB_PASSWORD"},
		"db.socket":                {"DB_SOCKET"},
		"db.schema":                {"DB_SCHEMA"},
		"db.ssl_ca":                {"MYSQL_ATTR_SSL_CA"},
		"tables.jobs":              {"DB_QUEUE_TABLE"},
		"tables.cache":             {"DB_CACHE_TABLE"},
		"tables.cache_locks":       {"DB_CACHE_LOCK_TABLE"},
		"failed.driver":            {"QUEUE_FAILED_DRIVER"},
		"worker.queues":            {"DB_QUEUE"},
		"worker.retry_after":       {"DB_QUEUE_RETRY_AFTER"},
		"app.name":                 {"APP_NAME"},
		"app.key":                  {"APP_KEY"},
		"app.cipher":               {"APP_CIPHER"},
		"app.timezone":             {"APP_TIMEZONE"},
		"app.env":                  {"APP_ENV"},
		"cache.store":              {"CACHE_DRIVER"},
		"cache.prefix":             {"CACHE_PREFIX"},
		"cache.redis.host":         {"REDIS_HOST"},
		"cache.redis.port":         {"REDIS_PORT"},
		"cache.redis.password":     {"REDIS_PASSWORD"},
		"cache.redis.username":     {"REDIS_USERNAME"},
		"cache.redis.url":          {"REDIS_URL"},
		"cache.redis.db":           {"REDIS_CACHE_DB"},
		"cache.redis.lock_db":      {"REDIS_DB"},
		"cache.redis.prefix":       {"REDIS_PREFIX"},
		"cache.memcached.host":     {"MEMCACHED_HOST"},
		"cache.memcached.port":     {"MEMCACHED_PORT"},
		"cache.memcached.username": {"MEMCACHED_USERNAME"},
		"log.channel":              {"LOG_CHANNEL"},
	}
	m["db.url"] = []string{"DATABASE_URL"}
	if v.atLeast(11, 0) {
		m["app.previous_keys"] = []string{"APP_PREVIOUS_KEYS"} // Laravel 11's key rotation
		m["cache.store"] = []string{"CACHE_STORE"}
		m["db.url"] = []string{"DB_URL"}
		m["app.maintenance_driver"] = []string{"APP_MAINTENANCE_DRIVER"}
		m["app.maintenance_store"] = []string{"APP_MAINTENANCE_STORE"}
	}
	if !v.atLeast(5, 7) {
		m["cache.redis.db"] = []string{"REDIS_DB"}
	}
	return m
}

// setters names the environment variables that set a key, for error messages; routes are set in YAML
// only.
func setters(path string, v version) string {
	if yamlOnly(path) {
		return "set in the YAML file"
	}
	names := []string{EnvName(path)}
	names = append(names, laravelNames(v)[path]...)
	return "set by " + strings.Join(names, " or ")
}

// knownKeys lists the keys under a section, for a message about an unknown key.
func knownKeys(section string) []string {
	var out []string
	seen := map[string]bool{}
	prefix := ""
	if section != "" {
		prefix = section + "."
	}
	for _, k := range keys {
		if !strings.HasPrefix(k.path, prefix) {
			continue
		}
		rest := strings.TrimPrefix(k.path, prefix)
		name, _, _ := strings.Cut(rest, ".")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// closest returns the candidate nearest to s by edit distance, when it is near enough to be a typo.
func closest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
