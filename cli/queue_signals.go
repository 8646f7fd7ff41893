package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// pauseFlags are the options of queue:pause and queue:resume.
func pauseFlags(fs *flag.FlagSet) {
	fs.Bool("all", false, "every queue on every connection (Laravel 13.25+)")
}

// Cache keys Laravel's commands write for its workers (and artisan-go's).
const (
	restartKey      = "illuminate:queue:restart"
	pausedKeyPrefix = "illuminate:queue:paused:" // + connection:queue (12.40+)
	allPausedKey    = "illuminate:queues:paused" // queue:pause --all (13.25+)
)

// signalValues is the default cache store as the signal commands write it.
type signalValues interface {
	CacheForever(ctx context.Context, key, value string) error
	CacheForget(ctx context.Context, key string) error
}

// signalStore opens the cache store PHP's workers read their signals from, and says how it keeps
// numbers: the database, file and memcached stores serialize every value (memcached's extension keeps
// types in flags, which the memcached package maps); RedisStore keeps numbers as they are.
func (a *adminRun) signalStore(ctx context.Context) (store signalValues, rawNumbers bool, done func(), err error) {
	if a.cfg.Cache.Store == "database" {
		conn, err := a.conn(ctx)
		if err != nil {
			return nil, false, nil, err
		}
		return conn, false, func() {}, nil
	}
	cs, err := openCacheStore(ctx, a.cfg)
	if err != nil {
		return nil, false, nil, err
	}
	if cs == nil {
		return nil, false, nil, fmt.Errorf("the cache store %q (CACHE_DRIVER / CACHE_STORE) is not one artisan-go reaches: workers read their signals there, so use php artisan %s, or the database, redis, file or memcached store", a.cfg.Cache.Store, a.name)
	}
	return cs.values, cs.rawNumbers, cs.Close, nil
}

func runQueueRestart(ctx context.Context, a *adminRun) int {
	store, rawNumbers, done, err := a.signalStore(ctx)
	if err != nil {
		return a.failure(err)
	}
	defer done()
	now := time.Now().Unix()
	value := laravel.SerializeInt(now)
	if rawNumbers {
		value = strconv.FormatInt(now, 10)
	}
	if err := store.CacheForever(ctx, restartKey, value); err != nil {
		return a.failure(err)
	}
	a.con.info("Broadcasting queue restart signal.")
	return 0
}

// parseQueue reads [connection:]queue as ParsesQueue does: the default connection when none is
// named, "default" when the queue is empty.
func (a *adminRun) parseQueue(s string) (connection, queue string) {
	connection, queue = a.cfg.Connection, s
	if c, q, ok := strings.Cut(s, ":"); ok {
		connection, queue = c, q
	}
	if queue == "" {
		queue = "default"
	}
	return connection, queue
}

func runQueuePause(ctx context.Context, a *adminRun, pause bool) int {
	verb := "resumed"
	if pause {
		verb = "paused"
	}
	all := a.set["all"]
	if !all && len(a.args) != 1 {
		if a.at(13, 25) {
			a.con.fail("A queue name is required unless the --all option is used.")
			return 1
		}
		return a.failure(errors.New(`Not enough arguments (missing: "queue").`))
	}
	store, _, done, err := a.signalStore(ctx)
	if err != nil {
		return a.failure(err)
	}
	defer done()
	key, what := allPausedKey, "all queues across all connections"
	if !all {
		connection, queue := a.parseQueue(a.args[0])
		key, what = pausedKeyPrefix+connection+":"+queue, "queue ["+connection+":"+queue+"]"
	}
	if pause {
		err = store.CacheForever(ctx, key, "b:1;")
	} else {
		err = store.CacheForget(ctx, key)
	}
	if err != nil {
		return a.failure(err)
	}
	a.con.info("Job processing on " + what + " has been " + verb + ".")
	return 0
}
