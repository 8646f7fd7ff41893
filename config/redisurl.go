package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// redisURL is what Laravel's ConfigurationUrlParser takes from a Redis connection's url (REDIS_URL):
// each part it gives replaces the connection's own setting.
type redisURL struct {
	tls                bool
	host               string
	port               int // 0: not given
	username, password *string
	db                 *int
}

// parseRedisURL reads REDIS_URL: redis:// or tcp:// for a plain connection, rediss:// or tls:// for
// TLS, then user and password, host, port and /database. "" gives nil.
func parseRedisURL(s string) (*redisURL, error) {
	if s == "" {
		return nil, nil
	}
	// The messages leave the URL out: it may hold the password.
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("is not a URL: %v", err)
	}
	var out redisURL
	switch u.Scheme {
	case "redis", "tcp":
	case "rediss", "tls":
		out.tls = true
	default:
		return nil, fmt.Errorf("the scheme %q is not one artisan-go connects with (redis://, rediss://, tcp:// or tls://)", u.Scheme)
	}
	if out.host = u.Hostname(); out.host == "" {
		return nil, errors.New("names no host")
	}
	if p := u.Port(); p != "" {
		if out.port, err = strconv.Atoi(p); err != nil || out.port < 1 || out.port > 65535 {
			return nil, fmt.Errorf("the port %q is not a TCP port", p)
		}
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			out.username = &name
		}
		if pw, ok := u.User.Password(); ok {
			out.password = &pw
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the path %q is not a Redis database number", u.Path)
		}
		out.db = &n
	}
	// ConfigurationUrlParser merges the query's options last: ?database=3 wins over the path.
	if q := u.Query(); q.Has("database") {
		n, err := strconv.Atoi(q.Get("database"))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the database option %q is not a Redis database number", q.Get("database"))
		}
		out.db = &n
	}
	return &out, nil
}

// apply puts what the URL gives in place of the connection's settings. The database in the URL is
// both the cache connection's and the lock connection's: the skeleton gives both the same url.
func (u *redisURL) apply(r *Redis) {
	r.TLS = r.TLS || u.tls
	r.Host = u.host
	if u.port != 0 {
		r.Port = u.port
	}
	if u.username != nil {
		r.Username = *u.username
	}
	if u.password != nil {
		r.Password = *u.password
	}
	if u.db != nil {
		r.DB, r.LockDB = *u.db, *u.db
	}
}
