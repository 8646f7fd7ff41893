package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// RateLimit is one limit of a rate limiter the PHP application defines with RateLimiter::for and
// names in a job's RateLimited middleware. The limiter is a PHP closure, so its limits are written here
// again; several entries with the same Limiter are its limits, in order.
type RateLimit struct {
	// Limiter is the limiter's name, as RateLimiter::for and RateLimited take it.
	Limiter string `mapstructure:"limiter"`
	// Allow is how many jobs may start per Per (Limit's maxAttempts).
	Allow int `mapstructure:"allow"`
	// Per is the period, whole seconds (Limit::perMinute is 1m).
	Per time.Duration `mapstructure:"per"`
	// By is the limit's key, with {property} replaced by the job's property of that name, as the
	// closure's ->by($job->userId) would be "{userId}". Default "".
	By string `mapstructure:"by"`
}

var typRateLimits = reflect.TypeFor[[]RateLimit]()

// rateLimitKeys are the keys of one rate limit in YAML.
var rateLimitKeys = []string{"allow", "by", "limiter", "per"}

// toRateLimits reads the rate_limiters list: a YAML sequence of mappings with the keys in
// rateLimitKeys.
func toRateLimits(raw any) ([]RateLimit, error) {
	if rs, ok := raw.([]RateLimit); ok {
		return rs, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("want a list of limits such as [{limiter: uploads, allow: 10, per: 1m}], got %s", describe(raw))
	}
	out := make([]RateLimit, 0, len(list))
	var errs []error
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("rate_limiters[%d]: want a mapping with limiter, allow and per, got %s", i, describe(e)))
			continue
		}
		var r RateLimit
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			var err error
			switch strings.ToLower(k) {
			case "limiter":
				r.Limiter, err = scalarString(v)
			case "allow":
				r.Allow, err = toInt(v)
			case "per":
				r.Per, err = toDuration(v)
			case "by":
				r.By, err = scalarString(v)
			default:
				hint := ""
				if c := closest(strings.ToLower(k), rateLimitKeys); c != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", c)
				}
				err = fmt.Errorf("unknown key%s; a rate limit has %s", hint, strings.Join(rateLimitKeys, ", "))
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rate_limiters[%d].%s: %w", i, k, err))
			}
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func (c *Config) validateRateLimits(v *validator) {
	for i, r := range c.RateLimiters {
		field := fmt.Sprintf("rate_limiters[%d]", i)
		if r.Limiter == "" {
			v.add(field+".limiter", "is empty", "name the limiter as RateLimiter::for does in the PHP application")
		}
		if r.Allow < 1 {
			v.add(field+".allow", fmt.Sprintf("is %d", r.Allow), "allow at least one job per period, e.g. allow: 10")
		}
		if r.Per < time.Second || r.Per%time.Second != 0 {
			v.add(field+".per", fmt.Sprintf("is %s", r.Per), "write whole seconds, e.g. per: 1m for Limit::perMinute")
		}
	}
}
