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
