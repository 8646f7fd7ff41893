package interop

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/cli"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestTablePrefixFromCachedConfig runs artisan-go on an application whose database connection has a
// table prefix, which artisan-go reads from the configuration `php artisan config:cache` wrote: PHP's
// migrations made app_jobs and the other tables, PHP dispatches, `artisan-go queue:work` runs the
// class it has a handler for and fails the other on those tables, PHP lists the failure, and after `artisan-go queue:retry`
// PHP's worker finds the job on app_jobs.
func TestTablePrefixFromCachedConfig(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db, phpapp.WithEnv("DB_PREFIX=app_"))
		// The test application keeps its bootstrap directory under its storage, beside its .env file;
		// config:cache loads a fresh application from bootstrap/app.php there.
		storage := app.StoragePath()
		if err := os.Symlink(filepath.Join(app.Dir(), "bootstrap", "app.php"), filepath.Join(storage, "bootstrap", "app.php")); err != nil {
			t.Fatal(err)
		}
		app.MustArtisan(ctx, "config:cache")
		// The prefix is in the cached configuration only: no variable artisan-go reads names it.
		env := app.EnvFile()
		routes := filepath.Join(storage, "artisan-go.yaml")
		if err := os.WriteFile(routes, []byte("unhandled: fail\nroutes:\n  - class: App\\Jobs\\Noop\n    builtin: noop\n"), 0o600); err != nil {
			t.Fatal(err)
		}

		app.MustDispatch(ctx, "noop", phpapp.Count(3))
		app.MustDispatch(ctx, "failing")
		var out, errOut strings.Builder
		code := cli.Do(ctx, []string{"queue:work", "--env-file", env, "--config", routes, "--stop-when-empty", "--sleep=0"}, nil, &out, &errOut)
		if code != 0 {
			t.Fatalf("artisan-go queue:work exited with %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
		}
		if got := strings.Count(out.String(), "Processed:"); got != 3 {
			t.Errorf("artisan-go processed %d jobs, want the 3 Noop jobs\n%s", got, &out)
		}
		if jobs, err := app.Jobs(ctx); err != nil || len(jobs) != 0 {
			t.Fatalf("app_jobs after artisan-go: %d rows, %v; want it empty", len(jobs), err)
		}
		failed, err := app.FailedJobs(ctx)
		if err != nil || len(failed) != 1 || !strings.Contains(failed[0].Payload, `App\\Jobs\\Failing`) {
			t.Fatalf("app_failed_jobs: %+v, %v; want the Failing job", failed, err)
		}
		if list := app.MustArtisan(ctx, "queue:failed"); !strings.Contains(list, `App\Jobs\Failing`) {
			t.Errorf("php artisan queue:failed does not list artisan-go's failure:\n%s", list)
		}

		out.Reset()
		errOut.Reset()
		if code := cli.Do(ctx, []string{"queue:retry", "all", "--env-file", env}, nil, &out, &errOut); code != 0 {
			t.Fatalf("artisan-go queue:retry all exited with %d: %s", code, &errOut)
		}
		if jobs, err := app.Jobs(ctx); err != nil || len(jobs) != 1 {
			t.Fatalf("app_jobs after queue:retry: %d rows, %v; want the retried job", len(jobs), err)
		}
		if printed, err := app.Work(ctx, "--sleep=0"); err != nil || !strings.Contains(printed, `App\Jobs\Failing`) {
			t.Errorf("PHP's worker did not run the retried job (%v):\n%s", err, printed)
		}
	})
}

// TestConfigFilesWrittenByHand runs artisan-go on an application without a cached configuration
// whose config/database.php writes its table prefix and whose config/cache.php writes its cache prefix
// instead of reading DB_PREFIX and CACHE_PREFIX, as PHP then does whatever .env says: artisan-go runs
// the jobs PHP dispatched onto shop_jobs, and stops on PHP's queue:restart, which PHP writes under
// the file's cache prefix in shop_cache.
func TestConfigFilesWrittenByHand(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db, phpapp.WithConfigFiles(map[string]func(string) string{
			"database.php": func(s string) string { return strings.ReplaceAll(s, "env('DB_PREFIX', '')", "'shop_'") },
			"cache.php": func(s string) string {
				return regexp.MustCompile(`'prefix' => env\('CACHE_PREFIX'.*`).ReplaceAllString(s, "'prefix' => 'shop_cache',")
			},
		}))
		routes := filepath.Join(t.TempDir(), "artisan-go.yaml")
		if err := os.WriteFile(routes, []byte("routes:\n  - class: App\\Jobs\\Noop\n    builtin: noop\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		app.MustDispatch(ctx, "noop", phpapp.Count(3))
		var out, errOut strings.Builder
		if code := cli.Do(ctx, []string{"queue:work", "--env-file", app.EnvFile(), "--config", routes, "--stop-when-empty", "--sleep=0"}, nil, &out, &errOut); code != 0 {
			t.Fatalf("artisan-go queue:work exited with %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
		}
		if got := strings.Count(out.String(), "Processed:"); got != 3 {
			t.Errorf("artisan-go processed %d jobs, want the 3 Noop jobs on shop_jobs\n%s", got, &out)
		}

		phpRestartStopsGoWorker(t, ctx, app, "--config", routes)
	})
}
