package cli

import (
	"context"
	"fmt"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// DispatcherParams says where OpenDispatcher reads the application's settings.
type DispatcherParams struct {
	// EnvFile is the application's .env; empty reads ./.env, as queue:work and queue:push do.
	EnvFile string
	// ConfigFile is an artisan-go YAML configuration; empty for none.
	ConfigFile string
	// Connection names the queue connection (config/queue.php) to dispatch onto; empty takes
	// QUEUE_CONNECTION. It must be a database one.
	Connection string
}

// OpenDispatcher opens what queue:push uses, for Go code that dispatches jobs to the application:
// the database its queue connection names (a *laravel.Conn, whose InTx runs a transaction the jobs
// join), and a Dispatcher writing the payloads of the application's Laravel version onto the
// connection's default queue, with APP_KEY's keyring for encrypted jobs (none when APP_KEY is empty)
// and the application's cache store for unique jobs. closeAll closes both; call it once done.
func OpenDispatcher(ctx context.Context, p DispatcherParams) (d *dispatch.Dispatcher, conn *laravel.Conn, closeAll func(), err error) {
	var overrides map[string]any
	if p.Connection != "" {
		overrides = map[string]any{"connection": p.Connection}
	}
	cfg, err := loadConfig(ctx, p.EnvFile, p.ConfigFile, overrides)
	if err == nil {
		err = cfg.CheckPushable()
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if conn, err = openConn(ctx, cfg); err != nil {
		return nil, nil, nil, err
	}
	dp := dispatch.Params{LaravelVersion: cfg.LaravelVersion, DefaultQueue: cfg.DefaultQueue()}
	if cfg.App.Key != "" {
		if dp.Keyring, err = payload.NewKeyring(cfg.App.Key, cfg.App.PreviousKeys, cfg.App.Cipher); err != nil {
			conn.Close()
			return nil, nil, nil, fmt.Errorf("APP_KEY: %w", err)
		}
	}
	locks, closeLocks, err := dispatchLocks(ctx, cfg, conn)
	if err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	dp.Locks = locks
	if d, err = dispatch.ForConn(conn, dp); err != nil {
		closeLocks()
		conn.Close()
		return nil, nil, nil, err
	}
	return d, conn, func() { closeLocks(); conn.Close() }, nil
}
