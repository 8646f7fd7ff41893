<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;

/**
 * Creates every table the queue needs the way a Laravel project does: it writes the framework's own
 * migrations (queue:table, queue:failed-table, queue:batches-table, cache:table) and runs them with
 * the application's (users, interop_log).
 */
class InteropSchema extends Command
{
    protected $signature = 'interop:schema';

    protected $description = 'Create the jobs, failed_jobs, job_batches, cache, cache_locks, users and interop_log tables';

    public function handle()
    {
        $dir = database_path('migrations');
        if (realpath($dir) === realpath(base_path('database/migrations'))) {
            // Run by hand, without APP_STORAGE: the generated migrations go to a directory of their
            // own, not among the app's checked-in ones (where the next run's would clash with them).
            $dir = sys_get_temp_dir().'/artisan-go-interop-'.md5(base_path()).'/migrations';
            if (! is_dir($dir)) {
                mkdir($dir, 0777, true);
            }
            $this->laravel->useDatabasePath(dirname($dir));
        }
        $generators = [
            'queue:table' => '_create_jobs_table.php',
            'queue:failed-table' => '_create_failed_jobs_table.php',
            'queue:batches-table' => '_create_job_batches_table.php',
            'cache:table' => '_create_cache_table.php',
        ];
        foreach ($generators as $command => $suffix) {
            if (! glob($dir.'/*'.$suffix)) {
                $this->callSilently($command);
            }
        }

        return $this->call('migrate', [
            '--force' => true,
            '--realpath' => true,
            '--path' => [$dir, base_path('database/migrations')],
        ]);
    }
}
