<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\Cache;

/**
 * Reads or writes the default cache store as Laravel's queue commands do: `get` prints the value as
 * JSON, `forever` stores true (QueueManager::pause of 12.40+), `forget` deletes the key.
 */
class InteropCache extends Command
{
    protected $signature = 'interop:cache {op : get, forever or forget} {key}';

    protected $description = 'Read or write a key of the default cache store';

    public function handle()
    {
        $key = $this->argument('key');
        switch ($this->argument('op')) {
            case 'get':
                $this->line(json_encode(Cache::get($key)));
                break;
            case 'forever':
                Cache::forever($key, true);
                break;
            case 'forget':
                Cache::forget($key);
                break;
            default:
                $this->error('unknown op');

                return 1;
        }

        return 0;
    }
}
