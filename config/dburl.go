package config

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strconv"
)

// dbURL is what a database url sets, as Laravel's ConfigurationUrlParser reads it; a part the url
// does not give is unset (nil).
type dbURL struct {
	driver, host, database, username, password, socket, schema *string
	sslmode, sslrootcert, sslcert, sslkey                      *string
	port                                                       *int
}

// sqliteURL is the form ConfigurationUrlParser rewrites before parse_url, which refuses an empty
// host: sqlite:///path (a relative path) and sqlite:////path (an absolute one).
var sqliteURL = regexp.MustCompile(`^(sqlite3?):///`)

// driverAliases are ConfigurationUrlParser's scheme aliases.
var driverAliases = map[string]string{"mysql2": "mysql", "postgres": "pgsql", "postgresql": "pgsql", "sqlite3": "sqlite", "mssql": "sqlsrv"}

var errMalformedURL = errors.New("the database configuration URL is malformed")

// parseDatabaseURL reads a connection url: the scheme is the driver, the path without its first "/"
// the database, and every part (percent-decoded) that reads as JSON null is left out, as PHP's
// json_decode makes it null; true and false become "1" and "".
func parseDatabaseURL(raw string) (dbURL, error) {
	var out dbURL
	u, err := url.Parse(sqliteURL.ReplaceAllString(raw, "$1://null/"))
	if err != nil || u.Scheme == "" && u.Host == "" {
		return out, errMalformedURL
	}
	set := func(dst **string, v string, given bool) {
		if !given {
			return
		}
		if s, ok := phpNative(v); ok {
			*dst = &s
		}
	}
	if u.Scheme != "" {
		d := u.Scheme
		if a, ok := driverAliases[d]; ok {
			d = a
		}
		out.driver = &d
	}
	set(&out.host, u.Hostname(), u.Hostname() != "")
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, errMalformedURL
		}
		out.port = &n
	}
	if u.User != nil {
		set(&out.username, u.User.Username(), true)
		pw, ok := u.User.Password()
		set(&out.password, pw, ok)
	}
	set(&out.database, trimFirstSlash(u.Path), u.Path != "" && u.Path != "/")
	q := u.Query()
	set(&out.socket, q.Get("unix_socket"), q.Has("unix_socket"))
	for dst, name := range map[**string]string{&out.sslmode: "sslmode", &out.sslrootcert: "sslrootcert", &out.sslcert: "sslcert", &out.sslkey: "sslkey"} {
		set(dst, q.Get(name), q.Has(name))
	}
	for _, name := range []string{"schema", "search_path"} { // search_path from Laravel 9
		set(&out.schema, q.Get(name), q.Has(name))
	}
	return out, nil
}

func trimFirstSlash(p string) string {
	if p != "" && p[0] == '/' {
		return p[1:]
	}
	return p
}

// phpNative is a url part as parseStringsToNativeTypes leaves it, as a string: JSON null is no value,
// true "1", false "", anything else as written.
func phpNative(s string) (string, bool) {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		switch v {
		case nil:
			return "", false
		case true:
			return "1", true
		case false:
			return "", true
		}
	}
	return s, true
}

// applyDatabaseURL replaces the connection's parts with those db.url gives, and marks them set for
// the defaults that follow; a malformed url is left for Validate to report.
func applyDatabaseURL(c *Config, set map[string]setting) {
	s, ok := set["db.url"]
	if !ok || c.DB.URL == "" {
		return
	}
	u, err := parseDatabaseURL(c.DB.URL)
	if err != nil {
		return
	}
	mark := func(path string) { set[path] = setting{path: path, source: s.source, dir: s.dir} }
	for _, f := range []struct {
		path string
		src  *string
		dst  *string
	}{
		{"db.driver", u.driver, &c.DB.Driver}, {"db.host", u.host, &c.DB.Host}, {"db.database", u.database, &c.DB.Database},
		{"db.username", u.username, &c.DB.Username}, {"db.password", u.password, &c.DB.Password},
		{"db.socket", u.socket, &c.DB.Socket}, {"db.schema", u.schema, &c.DB.Schema},
		{"db.sslmode", u.sslmode, &c.DB.SSLMode}, {"db.sslrootcert", u.sslrootcert, &c.DB.SSLRootCert},
		{"db.sslcert", u.sslcert, &c.DB.SSLCert}, {"db.sslkey", u.sslkey, &c.DB.SSLKey},
	} {
		if f.src != nil {
			*f.dst = *f.src
			mark(f.path)
		}
	}
	if u.port != nil {
		c.DB.Port = *u.port
		mark("db.port")
	}
}
