<?php
// Writes the hand-made envelopes in envelopes/ with PHP's own json_encode and serialize, following the
// key sets of laravel-spec.md §3.2 for each Laravel version. Run: php make-envelopes.php
namespace App\Jobs;

class SendInvoice
{
    public $invoiceId;
    protected $locale = 'de';
    private $note = 'ünï/€';
    public $job;
    public $connection;
    public $queue;
    public $delay;

    public function __construct($id) { $this->invoiceId = $id; }
}

$cmd = serialize(new SendInvoice(7));
$class = SendInvoice::class;
$h = 'Illuminate\Queue\CallQueuedHandler@call';
$data = ['commandName' => $class, 'command' => $cmd];
$uuid = '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d';

$cases = [
    // 5.5: no uuid, timeoutAt; unicode escaped.
    '5.5' => [['displayName' => $class, 'job' => $h, 'maxTries' => 3, 'timeout' => 60, 'timeoutAt' => 1700000000, 'data' => $data], 0],
    // 5.8/6.x: delay (old meaning: retryAfter), numeric.
    '6.x' => [['displayName' => $class, 'job' => $h, 'maxTries' => null, 'delay' => 15, 'timeout' => null, 'timeoutAt' => null, 'data' => $data], 0],
    // 7.x: uuid, maxExceptions, delay, timeoutAt.
    '7.x' => [['uuid' => $uuid, 'displayName' => $class, 'job' => $h, 'maxTries' => 5, 'maxExceptions' => 2, 'delay' => 30, 'timeout' => 90, 'timeoutAt' => 1700000600, 'data' => $data], 0],
    // 7.x raw string job without data.
    '7.x-raw' => [['uuid' => $uuid, 'displayName' => 'App\Legacy', 'job' => 'App\Legacy', 'maxTries' => null, 'maxExceptions' => null, 'delay' => null, 'timeout' => null, 'data' => ''], 0],
    // 8.0–8.42: backoff and retryUntil, no failOnTimeout; a numeric backoff as some old payloads carry.
    '8.0' => [['uuid' => $uuid, 'displayName' => $class, 'job' => $h, 'maxTries' => null, 'maxExceptions' => null, 'backoff' => 5, 'timeout' => null, 'retryUntil' => 1700000900, 'data' => $data], 0],
    // 11.x with the log context key added by ContextServiceProvider (after data).
    '11.x' => [['uuid' => $uuid, 'displayName' => $class, 'job' => $h, 'maxTries' => 3, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => '10,30,60', 'timeout' => 120, 'retryUntil' => null, 'data' => $data,
        'illuminate:log:context' => ['data' => ['trace_id' => serialize('abc-123')], 'hidden' => ['laravel_unique_job_key' => serialize('k')]]], JSON_UNESCAPED_UNICODE],
    // 12.x (12.51+): data.batchId, createdAt, delay (new meaning: dispatch delay), a Horizon-style key.
    '12.x' => [['uuid' => $uuid, 'displayName' => $class, 'job' => $h, 'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => true, 'backoff' => null, 'timeout' => null, 'retryUntil' => 1800000000,
        'data' => $data + ['batchId' => '9f3c2a5e-0000-4000-8000-000000000001'], 'createdAt' => 1763700000, 'pushedAt' => '1763700000.1234', 'delay' => 45], JSON_UNESCAPED_UNICODE],
    // 13.x: deleteWhenMissingModels.
    '13.x' => [['uuid' => $uuid, 'displayName' => $class, 'job' => $h, 'maxTries' => 1, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => '5', 'timeout' => 10, 'retryUntil' => null, 'deleteWhenMissingModels' => true,
        'data' => $data + ['batchId' => null], 'createdAt' => 1763700000, 'delay' => null], JSON_UNESCAPED_UNICODE],
    // 13.x raw job: data is any JSON.
    '13.x-raw' => [['uuid' => $uuid, 'displayName' => 'App\Handlers\Import', 'job' => 'App\Handlers\Import@handle', 'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null,
        'data' => [1, 2, 3], 'createdAt' => 1763700000, 'delay' => 5], JSON_UNESCAPED_UNICODE],
];
foreach ($cases as $name => [$payload, $flags]) {
    file_put_contents(__DIR__."/envelopes/$name.json", json_encode($payload, $flags));
}
