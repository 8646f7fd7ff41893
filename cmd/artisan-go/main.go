// Command artisan-go is a drop-in replacement for `php artisan queue:work` on Laravel's database queue.
//
// This stock binary runs the handlers that YAML routes configure (exec, http, builtin). To run Go
// handlers, build your own binary: register them on handlers.Default() and call cli.Main, as this one
// does.
package main

import (
	"os"

	"github.com/artisan-go/artisan-go/cli"
)

func main() {
	os.Exit(cli.Main())
}
