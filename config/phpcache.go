package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// phpArray is a PHP array read from var_export's text: its keys in order, and the values by key (an
// integer key written in decimal).
type phpArray struct {
	keys   []string
	values map[string]any
	// spread says the array, read from a config file's source, has entries the reader could not
	// tell the keys of (...$other, a constant as key): any key may hold another value than read.
	spread bool
}

// get follows a path of keys ("queue", "connections", "database") through nested arrays.
func (a *phpArray) get(path ...string) (any, bool) {
	var v any = a
	for _, k := range path {
		arr, ok := v.(*phpArray)
		if !ok || arr == nil {
			return nil, false
		}
		if v, ok = arr.values[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// phpObject stands for an object or an enum case in the export (a class's __set_state, (object) array,
// \Enum::Case): a value the configuration of the worker does not read.
type phpObject struct{ class string }

// readConfigCache reads the configuration `php artisan config:cache` wrote (bootstrap/cache/config.php
// beside the .env file, or APP_CONFIG_CACHE). It returns nil when there is none.
func readConfigCache(baseDir string, environ map[string]string) (*phpArray, string, error) {
	if baseDir == "" {
		return nil, "", nil
	}
	path := filepath.Join(baseDir, "bootstrap", "cache", "config.php")
	if p := environ["APP_CONFIG_CACHE"]; p != "" { // Application::normalizeCachePath
		path = p
		if !filepath.IsAbs(p) {
			path = filepath.Join(baseDir, p)
		}
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("read the cached configuration %s: %w", path, err)
	}
	v, err := parsePHPExport(string(b))
	if err != nil {
		return nil, path, fmt.Errorf("%w: the cached configuration %s (php artisan config:cache) cannot be read: %v; run php artisan config:cache again, or config:clear", ErrInvalid, path, err)
	}
	arr, ok := v.(*phpArray)
	if !ok {
		return nil, path, fmt.Errorf("%w: the cached configuration %s returns no array; run php artisan config:cache again", ErrInvalid, path)
	}
	return arr, path, nil
}

// parsePHPExport reads a PHP file that returns one value written by var_export, as config:cache writes
// it: `<?php return array ( 'key' => value, ... );`.
func parsePHPExport(src string) (any, error) {
	p := &exportParser{s: src}
	p.skipSpace()
	if !p.eat("<?php") {
		return nil, errors.New("it does not start with <?php")
	}
	p.skipSpace()
	if !p.eat("return") {
		return nil, errors.New("it does not return a value")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if !p.eat(";") {
		return nil, p.fail("';' after the value")
	}
	return v, nil
}

type exportParser struct {
	s   string
	pos int
}

func (p *exportParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// eat consumes word (case-insensitively) when it comes next.
func (p *exportParser) eat(word string) bool {
	if len(p.s)-p.pos >= len(word) && strings.EqualFold(p.s[p.pos:p.pos+len(word)], word) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *exportParser) fail(want string) error {
	line := 1 + strings.Count(p.s[:p.pos], "\n")
	return fmt.Errorf("line %d: expected %s", line, want)
}

func (p *exportParser) value() (any, error) {
	p.skipSpace()
	switch {
	case p.pos >= len(p.s):
		return nil, p.fail("a value")
	case p.eat("array"):
		return p.array()
	case p.eat("(object)"):
		p.skipSpace()
		if !p.eat("array") {
			return nil, p.fail("array after (object)")
		}
		if _, err := p.array(); err != nil {
			return nil, err
		}
		return phpObject{class: "stdClass"}, nil
	case p.s[p.pos] == '\'':
		return p.str()
	case p.s[p.pos] == '\\':
		return p.object()
	case p.eat("NULL"):
		return nil, nil
	case p.eat("true"):
		return true, nil
	case p.eat("false"):
		return false, nil
	}
	return p.number()
}

// array reads "( key => value, ... )" after the word array.
func (p *exportParser) array() (*phpArray, error) {
	p.skipSpace()
	if !p.eat("(") {
		return nil, p.fail("'(' after array")
	}
	a := &phpArray{values: map[string]any{}}
	for {
		p.skipSpace()
		if p.eat(")") {
			return a, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		var key string
		switch k := k.(type) {
		case string:
			key = k
		case int64:
			key = strconv.FormatInt(k, 10)
		default:
			return nil, p.fail("a string or integer key")
		}
		p.skipSpace()
		if !p.eat("=>") {
			return nil, p.fail("'=>'")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, dup := a.values[key]; !dup {
			a.keys = append(a.keys, key)
		}
		a.values[key] = v
		p.skipSpace()
		if !p.eat(",") {
			p.skipSpace()
			if p.eat(")") {
				return a, nil
			}
			return nil, p.fail("',' or ')'")
		}
	}
}

// str reads a single-quoted string: \\ and \' are escapes, any other backslash is itself.
func (p *exportParser) str() (string, error) {
	var b strings.Builder
	for i := p.pos + 1; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '\\' && i+1 < len(p.s) && (p.s[i+1] == '\\' || p.s[i+1] == '\''):
			b.WriteByte(p.s[i+1])
			i++
		case c == '\'':
			p.pos = i + 1
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", p.fail("the end of a quoted string")
}

// object reads \Class::__set_state(array(...)) or an enum case \Enum::Case.
func (p *exportParser) object() (any, error) {
	start := p.pos
	for p.pos < len(p.s) && (isIdentByte(p.s[p.pos]) || p.s[p.pos] == '\\') {
		p.pos++
	}
	class := p.s[start+1 : p.pos]
	if !p.eat("::") {
		return nil, p.fail("'::' after a class name")
	}
	if p.eat("__set_state") {
		p.skipSpace()
		if !p.eat("(") {
			return nil, p.fail("'(' after __set_state")
		}
		if _, err := p.value(); err != nil {
			return nil, err
		}
		p.skipSpace()
		if !p.eat(")") {
			return nil, p.fail("')' after __set_state's array")
		}
		return phpObject{class: class}, nil
	}
	for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	return phpObject{class: class}, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// number reads an integer (int64) or a float (float64, INF and NAN included).
func (p *exportParser) number() (any, error) {
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte("+-0123456789.eEINFA", p.s[p.pos]) >= 0 {
		p.pos++
	}
	t := p.s[start:p.pos]
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, nil
	}
	switch t {
	case "INF":
		return strconv.ParseFloat("+Inf", 64)
	case "-INF":
		return strconv.ParseFloat("-Inf", 64)
	case "NAN":
		return strconv.ParseFloat("NaN", 64)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && t != "" {
		return f, nil
	}
	p.pos = start
	return nil, p.fail("a value")
}

// cachedSettings turns the cached configuration into settings, as PHP reads its configuration from it
// instead of .env and the environment: the queue connection (connection, or queue.default), its
// table, queue and retry_after, the database connection it uses, failed jobs and batches, the app's
// name, key, cipher, timezone and environment, the cache store and prefix with the database store's
// tables, the file store's paths, memcached's servers and the Redis connections the cache uses, and
// the log channel. covered lists every key it stands for, set or null, whose .env and environment
// values PHP does not read.
func cachedSettings(arr *phpArray, connection, where, dir string) (out []setting, covered map[string]bool, c cachedFacts) {
	s := &settingSink{covered: map[string]bool{}, where: where, dir: dir}
	c.connections = map[string]string{}
	if v, ok := arr.get("queue", "default"); ok && v == nil {
		c.nullConnection = true
		s.covered["connection"] = true
		s.out = append(s.out, setting{path: "connection", value: "null", source: "in " + s.where, dir: s.dir})
	} else {
		s.from("connection", arr, "queue", "default")
	}
	if connection == "" {
		connection = arrString(arr, "queue", "default")
	}
	if qs := arrSub(arr, "queue", "connections"); qs != nil {
		for _, name := range qs.keys {
			c.connections[name] = arrString(qs, name, "driver")
		}
	}
	dbName := arrString(arr, "database", "default")
	if q := arrSub(arr, "queue", "connections", connection); q != nil {
		s.from("tables.jobs", q, "table")
		s.from("worker.queues", q, "queue")
		s.from("worker.retry_after", q, "retry_after")
		if c := arrString(q, "connection"); c != "" && arrString(q, "driver") == "database" { // Redis' is a Redis connection
			dbName = c
		}
	}
	if !s.database(arr, dbName) && arrSub(arr, "database", "connections") != nil {
		c.problems = append(c.problems, fmt.Errorf("%w: the queue connection [%s] uses the database connection [%s], which %s does not configure (PHP stops with \"Database connection [%s] not configured.\"); name a connection of config/database.php and run php artisan config:cache again",
			ErrInvalid, connection, dbName, where, dbName))
	}
	c.problems = append(c.problems, otherDatabases(arr, dbName, where, " and run php artisan config:cache again")...)
	if v, ok := arr.get("queue", "failed", "driver"); ok && v == nil {
		s.put("failed.driver", "null", true) // Laravel's Null provider
	} else if f, _ := arr.get("queue", "failed"); !ok && f != nil {
		if d, known := failedWithoutDriver(f); known {
			s.put("failed.driver", d, true)
		}
	} else {
		s.put("failed.driver", v, ok)
	}
	s.from("tables.failed_jobs", arr, "queue", "failed", "table")
	s.from("tables.job_batches", arr, "queue", "batching", "table")
	for _, k := range []string{"name", "key", "cipher", "timezone", "env"} {
		s.from("app."+k, arr, "app", k)
	}
	if v, ok := arr.get("app", "maintenance", "driver"); ok {
		s.put("app.maintenance_driver", v, ok)
		if _, has := arr.get("app", "maintenance", "store"); has {
			s.from("app.maintenance_store", arr, "app", "maintenance", "store")
		} else {
			s.put("app.maintenance_store", "", true) // no store: MaintenanceModeManager's default cache store
		}
	}
	if keys, ok := arr.get("app", "previous_keys"); ok {
		s.put("app.previous_keys", joinList(keys), true)
	}
	s.cache(arr)
	return s.out, s.covered, c
}

// settingSink gathers the settings a configuration array gives (the cached one, or one read from
// config/*.php), and the keys it covers. A value read from a file that the reader could not evaluate
// (phpUnknown, or a key of an array with entries of keys not known) gives nothing; it covers the key
// (PHP does not read the Laravel variable either, unless that code does) and is named in notes, with
// the setting to give.
type settingSink struct {
	out     []setting
	covered map[string]bool
	where   string // the file the values come from
	dir     string
	// files, for an array read from config/*.php (root), names the file of each of its top-level
	// keys. A key the files do not hold then covers nothing, as the framework's own config files
	// (merged under the application's from Laravel 11 on) and the worker's defaults for each
	// version stand for it.
	files     map[string]string
	root      *phpArray
	notes     []string
	pathNotes map[string]string // a value it could not evaluate, by setting (files only)
	store     string            // the cache store, once read
}

// put sets path to v when ok (covering it, set or null).
func (s *settingSink) put(path string, v any, ok bool) {
	if isUnknown(v) {
		s.unknown(path)
		return
	}
	if !ok && s.files != nil {
		return
	}
	s.covered[path] = true
	if v == nil && ok && nullIsEmpty[path] {
		v = "" // a null prefix is none
	}
	if text, isText := exportString(v); ok && isText {
		s.out = append(s.out, setting{path: path, value: text, source: "in " + s.where, dir: s.dir})
	}
}

// nullIsEmpty are the settings whose null PHP reads as an empty string.
var nullIsEmpty = map[string]bool{"cache.prefix": true, "cache.redis.prefix": true, "db.prefix": true}

// unknown notes a value of path the reader could not evaluate, and covers path. The MySQL options
// array, an extension_loaded() test in every skeleton, is passed over: its SSL CA is read from
// MYSQL_ATTR_SSL_CA as the skeleton reads it.
func (s *settingSink) unknown(path string) {
	if path == "db.ssl_ca" {
		return
	}
	s.covered[path] = true
	for prefix, store := range map[string]string{"cache.memcached.": "memcached", "cache.redis.": "redis", "cache.file.": "file", "tables.cache": "database"} {
		if strings.HasPrefix(path, prefix) && s.store != store {
			return // a store the application does not use
		}
	}
	if s.pathNotes == nil {
		s.pathNotes = map[string]string{}
	}
	s.pathNotes[path] = fmt.Sprintf("%s: the %s written there is PHP code artisan-go does not evaluate; set %s (%s) to the value PHP computes", s.where, path, path, EnvName(path))
}

// from puts the value at keys of a into path.
func (s *settingSink) from(path string, a *phpArray, keys ...string) {
	if f, ok := s.files[keys[0]]; ok && a == s.root {
		defer func(where string) { s.where = where }(s.where)
		s.where = f
	}
	if _, _, unknown := sourceGet(a, keys...); unknown {
		s.unknown(path)
		return
	}
	v, ok := a.get(keys...)
	s.put(path, v, ok)
}

// database puts the settings of the database connection dbName, as Laravel's ConnectionFactory makes
// its write connection; false when arr does not configure it.
func (s *settingSink) database(arr *phpArray, dbName string) bool {
	computed := func() bool {
		s.notes = append(s.notes, fmt.Sprintf("%s: the database connection [%s] is built by PHP code artisan-go does not evaluate (array_merge, a spread), so the database is read from .env (DB_HOST, …): set db.driver, db.host, db.database, db.prefix (ARTISAN_GO_DB_DRIVER, …) to what PHP computes", s.where, dbName))
		return true
	}
	if v, ok, unknown := sourceGet(arr, "database", "connections", dbName); unknown || ok && isUnknown(v) {
		return computed()
	}
	d := arrSub(arr, "database", "connections", dbName)
	if d == nil {
		return false
	}
	if d = writeConfig(d); d.spread {
		return computed()
	}
	for key, path := range map[string]string{"driver": "db.driver", "host": "db.host", "port": "db.port", "database": "db.database",
		"username": "db.username", "password": "db.password", "unix_socket": "db.socket", "url": "db.url",
		"prefix": "db.prefix", "prefix_indexes": "db.prefix_indexes", "sslmode": "db.sslmode", "sslrootcert": "db.sslrootcert",
		"sslcert": "db.sslcert", "sslkey": "db.sslkey"} {
		s.from(path, d, key)
	}
	s.from("db.ssl_ca", d, "options", "1009") // PDO::MYSQL_ATTR_SSL_CA
	schema := "schema"                        // Laravel 9+ names it search_path; a list of schemas is an array
	if _, ok := d.get("search_path"); ok {
		schema = "search_path"
	}
	if v, ok := d.get(schema); !isUnknown(v) {
		s.put("db.schema", joinList(v), ok)
	}
	return true
}

// cache puts the cache store and prefix, the database store's tables, the file store's paths,
// memcached's servers, the Redis connections the cache uses and the log channel.
func (s *settingSink) cache(arr *phpArray) {
	if f, ok := s.files["cache"]; ok {
		s.where = f
	}
	s.store = arrString(arr, "cache", "default")
	s.from("cache.store", arr, "cache", "default")
	s.from("cache.prefix", arr, "cache", "prefix")
	s.from("tables.cache", arr, "cache", "stores", "database", "table")
	s.from("tables.cache_locks", arr, "cache", "stores", "database", "lock_table")
	if db := arrSub(arr, "cache", "stores", "database"); db != nil && !db.spread {
		if _, has := db.values["lock_table"]; !has {
			// CacheManager's own default; DB_CACHE_LOCK_TABLE counts only where a file reads it.
			s.put("tables.cache_locks", "cache_locks", true)
		}
	}
	s.from("cache.file.path", arr, "cache", "stores", "file", "path")
	s.from("cache.file.lock_path", arr, "cache", "stores", "file", "lock_path")
	if servers := arrSub(arr, "cache", "stores", "memcached", "servers"); servers != nil {
		var list []string
		known := true
		for _, k := range servers.keys {
			if srv, _ := servers.values[k].(*phpArray); srv != nil {
				for _, f := range []string{"host", "port", "weight"} {
					v, _ := srv.get(f)
					known = known && !isUnknown(v)
				}
				list = append(list, arrString(srv, "host")+":"+arrString(srv, "port")+":"+arrString(srv, "weight"))
			}
		}
		if known {
			s.put("cache.memcached.servers", strings.Join(list, ","), len(list) > 0)
		} else {
			s.unknown("cache.memcached.servers")
		}
	}
	s.from("cache.redis.prefix", arr, "database", "redis", "options", "prefix")
	if c := arrSub(arr, "database", "redis", arrString(arr, "cache", "stores", "redis", "connection")); c != nil {
		for key, path := range map[string]string{"host": "cache.redis.host", "port": "cache.redis.port", "password": "cache.redis.password",
			"username": "cache.redis.username", "database": "cache.redis.db", "url": "cache.redis.url"} {
			s.from(path, c, key)
		}
	}
	lockConn := arrString(arr, "cache", "stores", "redis", "lock_connection")
	if lockConn == "" {
		lockConn = "default"
	}
	s.from("cache.redis.lock_db", arr, "database", "redis", lockConn, "database")
	s.from("log.channel", arr, "logging", "default")
	s.from("log.output_timezone", arr, "queue", "output_timezone")
}

// arrString is the value at keys as a .env line would give it ("" for null, arrays and unknowns).
func arrString(a *phpArray, keys ...string) string {
	v, _ := a.get(keys...)
	s, _ := exportString(v)
	return s
}

// arrSub is the array at keys, or nil.
func arrSub(a *phpArray, keys ...string) *phpArray {
	v, _ := a.get(keys...)
	s, _ := v.(*phpArray)
	return s
}

// isUnknown reports a value read from a config file that the reader could not evaluate.
func isUnknown(v any) bool {
	_, unknown := v.(phpUnknown)
	return unknown
}

// writeConfig is a database connection's configuration as Laravel's ConnectionFactory makes its write
// connection, which the queue's claims and deletes use: a write array's keys (the first of a list of
// them) over the others, and the first of several hosts (PHP tries them in random order).
func writeConfig(d *phpArray) *phpArray {
	out := &phpArray{values: map[string]any{}, spread: d.spread}
	set := func(k string, v any) {
		if _, ok := out.values[k]; !ok {
			out.keys = append(out.keys, k)
		}
		out.values[k] = v
	}
	for _, k := range d.keys {
		if k != "read" && k != "write" {
			set(k, d.values[k])
		}
	}
	w, _ := d.values["write"].(*phpArray)
	if w != nil && len(w.keys) > 0 {
		if first, ok := w.values[w.keys[0]].(*phpArray); ok && w.keys[0] == "0" { // a list of write configurations
			w = first
		}
		for _, k := range w.keys {
			set(k, w.values[k])
		}
		out.spread = out.spread || w.spread
	}
	if hosts, ok := out.values["host"].(*phpArray); ok && len(hosts.keys) > 0 {
		set("host", hosts.values[hosts.keys[0]])
	}
	return out
}

// cachedFacts is what the cached configuration says beyond settings: the driver of each queue
// connection, and what it configures that the worker cannot follow.
type cachedFacts struct {
	connections map[string]string // queue connection → its driver
	problems    []error
	// nullConnection says queue.default is null (QUEUE_CONNECTION=null when it was cached), which
	// QueueManager takes as the null driver.
	nullConnection bool
}

// otherDatabases reports the tables PHP keeps on another database connection than the queue's,
// dbName: failed jobs (queue.failed.database), batches (queue.batching.database) and the database
// cache store (its connection and lock_connection). The worker reaches one database, the queue's, and
// writing them there would hide failed jobs from PHP's queue:failed, leave batches unfinished and miss
// queue:restart and unique locks. Connections configured alike (driver, host, port, database, socket,
// url, prefix, schema) count as the same.
func otherDatabases(arr *phpArray, dbName, where, then string) []error {
	def, _ := arr.get("database", "default")
	defName, _ := exportString(def)
	resolve := func(v any, ok bool) string {
		if name, isText := exportString(v); ok && isText && name != "" {
			return name
		}
		return defName
	}
	conn := func(name string) *phpArray {
		v, _ := arr.get("database", "connections", name)
		if a, _ := v.(*phpArray); a != nil {
			return writeConfig(a)
		}
		return nil
	}
	same := func(a, b string) bool {
		if a == b {
			return true
		}
		ca, cb := conn(a), conn(b)
		if ca == nil || cb == nil {
			return false
		}
		for _, k := range []string{"driver", "host", "port", "database", "unix_socket", "url", "prefix", "search_path", "schema"} {
			va, _ := ca.get(k)
			vb, _ := cb.get(k)
			if la, lb := joinList(va), joinList(vb); la != lb && !(k == "driver" && mysqlFamily(la) && mysqlFamily(lb)) {
				return false
			}
		}
		return true
	}
	var out []error
	check := func(key string, name string) {
		if !same(name, dbName) {
			out = append(out, fmt.Errorf("%w: %s in %s is the database connection [%s], but the queue's jobs table is on [%s]: artisan-go reaches only the queue's database, and would write these rows where PHP does not read them; "+
				"put them on [%s] (or the queue on [%s]) in config/queue.php or config/cache.php%s", ErrInvalid, key, where, name, dbName, dbName, name, then))
		}
	}
	driver, hasDriver := arr.get("queue", "failed", "driver")
	if d, _ := exportString(driver); !hasDriver || d == "database" || d == "database-uuids" {
		if _, ok := arr.get("queue", "failed"); ok {
			check("queue.failed.database", resolve(arr.get("queue", "failed", "database")))
		}
	}
	if _, ok := arr.get("queue", "batching"); ok {
		check("queue.batching.database", resolve(arr.get("queue", "batching", "database")))
	}
	if store, _ := arr.get("cache", "default"); store == "database" {
		check("cache.stores.database.connection", resolve(arr.get("cache", "stores", "database", "connection")))
		if v, ok := arr.get("cache", "stores", "database", "lock_connection"); ok && v != nil {
			check("cache.stores.database.lock_connection", resolve(v, ok))
		}
	}
	return out
}

// mysqlFamily reports the drivers of one server protocol: Laravel 11's mariadb connection is the
// mysql one with a name of its own.
func mysqlFamily(driver string) bool { return driver == "mysql" || driver == "mariadb" }

// joinList is a cached list of strings joined with commas, as APP_PREVIOUS_KEYS writes them.
func joinList(v any) string {
	a, ok := v.(*phpArray)
	if !ok {
		s, _ := exportString(v)
		return s
	}
	var parts []string
	for _, k := range a.keys {
		if s, ok := exportString(a.values[k]); ok && s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ",")
}

// exportString is a cached value as the string a .env line would give: strings as they are, numbers
// in decimal, true "1", false ""; false for null, arrays and objects.
func exportString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		if x {
			return "1", true
		}
		return "", true
	}
	return "", false
}
