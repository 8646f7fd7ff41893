package config_test

import (
	"fmt"

	"github.com/artisan-go/artisan-go/config"
)

// Load layers the sources: here the process environment (Laravel's names and ours) and a flag.
func ExampleLoad() {
	cfg, err := config.Load(config.LoadParams{
		Environ: []string{
			"DB_CONNECTION=pgsql",
			"DB_DATABASE=shop",
			"APP_NAME=My Shop",
			"ARTISAN_GO_WORKER_CONCURRENCY=8",
		},
		Overrides: map[string]any{"worker.queues": []string{"high", "default"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.DB.Driver, cfg.DB.Port, cfg.DB.Database)
	fmt.Println(cfg.Worker.Concurrency, cfg.Worker.Queues, cfg.Worker.RetryAfter)
	fmt.Println(cfg.Cache.Prefix)
	// Output:
	// pgsql 5432 shop
	// 8 [high default] 1m30s
	// my_shop_cache
}

// Validate names the key, the variables that set it and the fix.
func ExampleConfig_Validate() {
	cfg := config.Default()
	cfg.Worker.Concurrency = 0
	fmt.Println(cfg.Validate())
	// Output:
	// worker.concurrency (set by ARTISAN_GO_WORKER_CONCURRENCY): 0 is less than 1; run at least 1 job at a time
}
