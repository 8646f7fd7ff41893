<?php

namespace App\Console;

use Illuminate\Foundation\Console\Kernel as ConsoleKernel;

class Kernel extends ConsoleKernel
{
    protected $commands = [
        Commands\InteropSchema::class,
        Commands\InteropDispatch::class,
        Commands\InteropBatch::class,
        Commands\InteropBenchEnqueue::class,
        Commands\InteropBenchProduce::class,
        Commands\InteropBenchAppWrites::class,
        Commands\InteropCache::class,
        Commands\InteropScenario::class,
    ];
}
