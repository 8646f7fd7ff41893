<?php

namespace App\Jobs\Scenario;

use App\Support\InteropLog;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use RuntimeException;

/**
 * One job of the differential suite (internal/differential). It records its run in interop_log and
 * then does what its plan says for this attempt; the last entry of the plan repeats. The Go handler
 * registered for the same class reads the same plan and does the same, so the two workers can be
 * compared on identical tables.
 *
 * Plan entries: ok, throw, release:<seconds>, fail, fail-throw, delete, delete-throw, sleep:<seconds>,
 * cancel-batch ($this->batch()->cancel()), cancelled-or-throw (return once the batch is cancelled,
 * throw otherwise).
 */
class Scenario implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable;

    public $name;
    public $plan;
    public $tries;
    public $backoff;
    public $maxExceptions;
    public $timeout;
    public $failOnTimeout = false;
    public $retryUntil;

    public function __construct(string $name, array $plan)
    {
        $this->name = $name;
        $this->plan = $plan;
    }

    public function handle()
    {
        $attempt = $this->job->attempts();
        InteropLog::write(static::class, $this->job, $this->record());
        $step = $this->plan[min($attempt, count($this->plan)) - 1] ?? 'ok';
        [$action, $arg] = array_pad(explode(':', $step, 2), 2, null);
        $message = 'scenario '.$this->name.' attempt '.$attempt;
        switch ($action) {
            case 'ok':
                return;
            case 'throw':
                throw new RuntimeException($message);
            case 'release':
                $this->release((int) $arg);
                return;
            case 'release-throw':
                $this->release((int) $arg);
                throw new RuntimeException($message.' after releasing');
            case 'fail':
                $this->fail(new RuntimeException($message));
                return;
            case 'fail-throw':
                $this->fail(new RuntimeException($message));
                throw new RuntimeException($message.' after failing');
            case 'delete':
                $this->delete();
                return;
            case 'delete-throw':
                $this->delete();
                throw new RuntimeException($message.' after deleting');
            case 'sleep':
                sleep((int) $arg);
                return;
            case 'cancel-batch':
                $this->batch()->cancel();
                return;
            case 'cancelled-or-throw':
                if ($this->batch() && $this->batch()->cancelled()) {
                    return;
                }
                throw new RuntimeException($message.' in a batch not cancelled');
        }
        throw new RuntimeException('unknown plan step '.$step);
    }

    /**
     * What the run records besides the job's identity: the scenario name, and what subclasses add.
     */
    protected function record(): array
    {
        return ['name' => $this->name];
    }
}
