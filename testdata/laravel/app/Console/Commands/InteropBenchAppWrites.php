<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Schema;

/**
 * Writes as the application's requests do beside the workers: one insert into a table of its own
 * every --every milliseconds, through the default connection with its defaults (on SQLite, PDO's
 * busy timeout). It prints "ready" once its table is fresh, then each insert's duration in
 * milliseconds, one per line, until it is stopped.
 */
class InteropBenchAppWrites extends Command
{
    protected $signature = 'interop:bench-app-writes {--every=10} {--table=bench_app_writes}';

    protected $description = 'Time one insert every few milliseconds until stopped';

    public function handle()
    {
        $table = $this->option('table');
        $every = max(1, (int) $this->option('every')) * 1000;
        Schema::dropIfExists($table);
        Schema::create($table, function (Blueprint $t) {
            $t->id();
            $t->string('note');
            $t->unsignedInteger('created_at');
        });
        fwrite(STDOUT, "ready\n");
        while (true) {
            $start = hrtime(true);
            DB::table($table)->insert(['note' => 'request', 'created_at' => time()]);
            fwrite(STDOUT, sprintf("%.3f\n", (hrtime(true) - $start) / 1e6));
            usleep($every);
        }
    }
}
