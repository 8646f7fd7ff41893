// Command welcome is an application's own artisan-go binary: it carries a Go handler for the Laravel job
// App\Jobs\SendWelcomeEmail and otherwise is the stock command line, so
//
//	go run ./examples/welcome queue:work --env-file /var/www/app/.env
//
// works that class in Go and leaves every other class to the PHP workers on the same queue.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/handlers"
)

// SendWelcomeEmail mirrors the PHP job's properties. Public, protected and private properties bind the
// same way, by name; properties missing from the payload keep their zero value.
type SendWelcomeEmail struct {
	Email  string   `php:"email"`
	UserID int64    `php:"userId"`
	Tags   []string `php:"tags"`
	Locale string   `php:"locale"` // protected in PHP
}

// deliver sends the mail; a real application would call its mail service here.
var deliver = func(ctx context.Context, to, locale string) error {
	fmt.Printf("welcome mail to %s (%s)\n", to, locale)
	return nil
}

// registerHandlers puts this application's Go handlers on the registry the command line uses.
func registerHandlers() {
	handlers.Register(`App\Jobs\SendWelcomeEmail`, handlers.Typed(
		func(ctx context.Context, job *handlers.Job, cmd *SendWelcomeEmail) error {
			// ctx is cancelled when the job's timeout passes or the worker is told to stop; an error
			// is an exception that Laravel's tries and backoff rules retry or fail.
			return deliver(ctx, cmd.Email, cmd.Locale)
		}))
}

func main() {
	registerHandlers()
	os.Exit(cli.Main())
}
