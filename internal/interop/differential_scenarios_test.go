package interop

import (
	"time"

	"github.com/artisan-go/artisan-go/worker"
)

// diffScenarios is the table of the differential suite (differential_test.go). Add a row to prove one
// more behaviour the same as PHP's worker; add a PHP job class under
// testdata/laravel/app/Jobs/Scenario and its Go handler in registerScenarios when a row needs one.
var diffScenarios = []diffScenario{
	// Tries, backoff, maxExceptions, retryUntil.
	{name: "ok", steps: []diffStep{dispatchJobs(job("a"), job("b"), job("c").with("queue", "other")), work(diffWork{})}},
	{name: "queue-priority", steps: []diffStep{
		dispatchJobs(job("low"), job("high").with("queue", "high"), job("other").with("queue", "other")),
		work(diffWork{queue: "high,default"}),
	}},
	{name: "once", steps: []diffStep{dispatchJobs(job("a"), job("b")), work(diffWork{once: true})}},
	{name: "throw-released-then-ok", steps: []diffStep{
		dispatchJobs(job("a", "throw", "ok")), work(diffWork{tries: 3, once: true}), work(diffWork{tries: 3}),
	}},
	{name: "throw-fails-on-last-try", steps: []diffStep{dispatchJobs(job("a", "throw")), work(diffWork{tries: 2})}},
	{name: "tries-from-job", steps: []diffStep{dispatchJobs(job("a", "throw").with("tries", 3)), work(diffWork{})}},
	// $tries = 2.5 and $maxExceptions = 1.5, which PHP compares with the attempts as they are.
	{name: "tries-fraction", steps: []diffStep{dispatchJobs(job("a", "throw").with("tries", 2.5), job("b", "throw").with("tries", 0.5)), work(diffWork{})}},
	{name: "max-exceptions-fraction", steps: []diffStep{dispatchJobs(job("a", "throw").with("tries", 5).with("maxExceptions", 1.5)), work(diffWork{})}},
	{name: "tries-unlimited-release-loop-bounded", steps: []diffStep{
		dispatchJobs(job("a", "throw", "throw", "ok").with("tries", 0)), work(diffWork{tries: 1}),
	}},
	{name: "worker-backoff", steps: []diffStep{
		dispatchJobs(job("a", "throw", "ok")), work(diffWork{tries: 3, backoff: 5}), passTime, work(diffWork{tries: 3}),
	}},
	{name: "job-backoff-list", steps: []diffStep{
		dispatchJobs(job("a", "throw", "throw", "ok").with("tries", 3).with("backoff", []int{3, 7})),
		work(diffWork{}), passTime, work(diffWork{}), passTime, work(diffWork{}),
	}},
	{name: "job-backoff-zero-over-worker", steps: []diffStep{
		dispatchJobs(job("a", "throw", "ok").with("tries", 2).with("backoff", 0)), work(diffWork{backoff: 5, once: true}),
	}},
	{name: "max-exceptions", steps: []diffStep{
		dispatchJobs(job("a", "throw").with("tries", 5).with("maxExceptions", 2)),
		work(diffWork{once: true}), work(diffWork{}),
	}},
	// The array store lives in each worker process: maxExceptions counts start again in the second.
	{name: "max-exceptions-array-store", env: []string{"CACHE_DRIVER=array"}, steps: []diffStep{
		dispatchJobs(job("a", "throw").with("tries", 5).with("maxExceptions", 2)),
		work(diffWork{once: true}), work(diffWork{}),
	}},
	{name: "max-exceptions-with-releases", steps: []diffStep{
		dispatchJobs(job("a", "release:0", "throw", "release:0", "throw", "ok").with("tries", 10).with("maxExceptions", 2)),
		work(diffWork{}),
	}},
	{name: "retry-until-passed", steps: []diffStep{dispatchJobs(job("a").with("retryUntil", -10)), work(diffWork{tries: 3})}},
	{name: "retry-until-ahead-ignores-tries", steps: []diffStep{
		dispatchJobs(job("a", "throw", "throw", "ok").with("retryUntil", 3600).with("tries", 1)), work(diffWork{}),
	}},

	// Release, fail and delete from the handler.
	{name: "release-now-then-ok", steps: []diffStep{dispatchJobs(job("a", "release:0", "ok")), work(diffWork{tries: 3})}},
	{name: "release-delayed", steps: []diffStep{dispatchJobs(job("a", "release:30", "ok")), work(diffWork{tries: 3})}},
	{name: "release-exceeds-tries", steps: []diffStep{dispatchJobs(job("a", "release:0")), work(diffWork{tries: 2})}},
	{name: "fail", steps: []diffStep{dispatchJobs(job("a", "fail")), work(diffWork{tries: 3})}},
	{name: "failed-hook-on-exception", steps: []diffStep{
		dispatchJobs(job("a", "throw").class("ScenarioWithFailedHook")), work(diffWork{phpFinishes: true}),
	}},
	{name: "failed-hook-on-fail", steps: []diffStep{
		dispatchJobs(job("a", "fail").class("ScenarioWithFailedHook")), work(diffWork{phpFinishes: true}),
	}},
	// A failed() that throws: PHP reports it, and the job's own failed_jobs row is the only one.
	{name: "failed-hook-throws", steps: []diffStep{
		dispatchJobs(job("a", "throw").class("ScenarioWithThrowingFailedHook")), work(diffWork{phpFinishes: true}),
	}},
	{name: "release-then-throw", steps: []diffStep{dispatchJobs(job("a", "release-throw:30")), work(diffWork{tries: 3})}},
	{name: "fail-then-throw", steps: []diffStep{dispatchJobs(job("a", "fail-throw")), work(diffWork{tries: 3})}},
	{name: "delete", steps: []diffStep{dispatchJobs(job("a", "delete")), work(diffWork{tries: 3})}},
	{name: "delete-then-throw", steps: []diffStep{dispatchJobs(job("a", "delete-throw")), work(diffWork{tries: 3})}},

	// Timeouts.
	{name: "timeout-last-try", steps: []diffStep{
		dispatchJobs(job("a", "sleep:3").with("timeout", 1)), work(diffWork{phpExits: true}),
	}},
	{name: "timeout-retried", steps: []diffStep{
		dispatchJobs(job("a", "sleep:3").with("timeout", 1).with("tries", 3)), work(diffWork{phpExits: true}),
	}},
	{name: "timeout-once", steps: []diffStep{
		dispatchJobs(job("a", "sleep:3").with("timeout", 1).with("tries", 3)), work(diffWork{once: true}),
	}},
	{name: "timeout-max-exceptions", steps: []diffStep{
		dispatchJobs(job("a", "sleep:3").with("timeout", 1).with("tries", 3).with("maxExceptions", 1)), work(diffWork{phpExits: true}),
	}},
	{name: "timeout-fail-on-timeout", steps: []diffStep{
		dispatchJobs(job("a", "sleep:3").with("timeout", 1).with("tries", 3).with("failOnTimeout", true)), work(diffWork{phpExits: true}),
	}},

	// Delays.
	{name: "delayed-not-yet", steps: []diffStep{dispatchJobs(job("a").with("delay", 60), job("b")), work(diffWork{})}},
	{name: "delayed-then-due", steps: []diffStep{dispatchJobs(job("a").with("delay", 60)), work(diffWork{}), passTime, work(diffWork{})}},

	// Chains.
	{name: "chain", steps: []diffStep{{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a"), job("b"), job("c")}}}, work(diffWork{})}},
	{name: "chain-failing-link", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a"), job("b", "throw"), job("c")}}}, work(diffWork{}),
	}},
	{name: "chain-failing-link-catch", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Catch: true, Jobs: []sjob{job("a"), job("b", "throw"), job("c")}}},
		work(diffWork{phpFinishes: true}),
	}},
	{name: "chain-deleted-link", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a", "delete"), job("b")}}}, work(diffWork{}),
	}},
	{name: "chain-deleted-link-throws", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a", "delete-throw"), job("b")}}}, work(diffWork{}),
	}},
	{name: "chain-released-link", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a", "release:0", "ok"), job("b")}}}, work(diffWork{tries: 2}),
	}},
	{name: "chain-failed-link", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a", "fail"), job("b")}}}, work(diffWork{}),
	}},

	{name: "chain-link-queue-and-delay", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a"), job("b").with("queue", "other").with("delay", 30), job("c")}}},
		work(diffWork{queue: "default,other"}), passTime, work(diffWork{queue: "default,other"}),
	}},
	{name: "chain-encrypted", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "chain", Jobs: []sjob{job("a").class("ScenarioSecret"), job("b", "throw").class("ScenarioSecret")}}},
		work(diffWork{}),
	}},

	// Batches.
	{name: "batch", steps: []diffStep{{dispatch: &scenarioSpec{Mode: "batch", Jobs: []sjob{job("a"), job("b")}}}, work(diffWork{})}},
	{name: "batch-failure", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Jobs: []sjob{job("a", "throw"), job("b")}}}, work(diffWork{}),
	}},
	{name: "batch-failure-allowed", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", AllowFailures: true, Jobs: []sjob{job("a", "throw"), job("b")}}}, work(diffWork{}),
	}},
	{name: "batch-deleted-member", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Jobs: []sjob{job("a", "delete"), job("b")}}}, work(diffWork{}),
	}},
	{name: "batch-released-member", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Jobs: []sjob{job("a", "release:0", "ok"), job("b")}}}, work(diffWork{tries: 2}),
	}},
	{name: "batch-all-failed-allowed", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", AllowFailures: true, Jobs: []sjob{job("a", "fail"), job("b", "throw")}}}, work(diffWork{}),
	}},
	// A member cancels the batch ($this->batch()->cancel()); the next ones see it cancelled and return.
	{name: "batch-cancelled-by-member", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Jobs: []sjob{job("a", "cancel-batch"), job("b", "cancelled-or-throw"), job("c", "cancelled-or-throw")}}},
		work(diffWork{}),
	}},
	{name: "batch-callbacks", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Callbacks: true, Jobs: []sjob{job("a"), job("b")}}}, work(diffWork{phpFinishes: true}),
	}},
	{name: "batch-callbacks-failure", steps: []diffStep{
		{dispatch: &scenarioSpec{Mode: "batch", Callbacks: true, AllowFailures: true, Jobs: []sjob{job("a", "throw"), job("b")}}},
		work(diffWork{phpFinishes: true}),
	}},

	// Unique jobs.
	{name: "unique", steps: []diffStep{dispatchJobs(job("a").class("ScenarioUnique")), work(diffWork{})}},
	{name: "unique-dispatched-twice", steps: []diffStep{
		dispatchJobs(job("a").class("ScenarioUnique")), dispatchJobs(job("b").class("ScenarioUnique")), work(diffWork{}),
		dispatchJobs(job("c").class("ScenarioUnique")), work(diffWork{}),
	}},
	{name: "unique-failed", steps: []diffStep{dispatchJobs(job("a", "throw").class("ScenarioUnique")), work(diffWork{})}},
	{name: "unique-released", steps: []diffStep{dispatchJobs(job("a", "release:30").class("ScenarioUnique")), work(diffWork{tries: 2})}},
	{name: "unique-deleted", steps: []diffStep{dispatchJobs(job("a", "delete").class("ScenarioUnique")), work(diffWork{})}},
	{name: "unique-routed", steps: []diffStep{
		dispatchJobs(job("a").class("ScenarioUniqueRouted").with("key", "r1")), dispatchJobs(job("b").class("ScenarioUniqueRouted").with("key", "r1")),
		work(diffWork{}), dispatchJobs(job("c").class("ScenarioUniqueRouted").with("key", "r1")), work(diffWork{}),
	}},
	{name: "unique-until-processing-released", steps: []diffStep{
		dispatchJobs(job("a", "release:30").class("ScenarioUniqueUntilProcessing")), work(diffWork{tries: 2}),
		dispatchJobs(job("b").class("ScenarioUniqueUntilProcessing")), work(diffWork{tries: 2}),
	}},
	{name: "unique-until-processing", steps: []diffStep{
		dispatchJobs(job("a", "throw", "ok").class("ScenarioUniqueUntilProcessing")), work(diffWork{tries: 2, once: true}),
		dispatchJobs(job("b").class("ScenarioUniqueUntilProcessing")), work(diffWork{tries: 2}),
	}},

	// Encrypted jobs.
	{name: "encrypted", steps: []diffStep{dispatchJobs(job("a").class("ScenarioSecret")), work(diffWork{})}},
	{name: "encrypted-failed", steps: []diffStep{dispatchJobs(job("a", "throw").class("ScenarioSecret")), work(diffWork{})}},

	// Models.
	{name: "model", steps: []diffStep{dispatchJobs(job("a").class("ScenarioModel").with("users", 2)), work(diffWork{})}},
	{name: "model-missing", steps: []diffStep{
		dispatchJobs(job("a").class("ScenarioModel").with("users", 2)), {sql: "DELETE FROM users WHERE name = 'a0'"}, work(diffWork{tries: 3}),
	}},
	{name: "model-missing-in-collection", steps: []diffStep{
		dispatchJobs(job("a").class("ScenarioModel").with("users", 2)), {sql: "DELETE FROM users WHERE name = 'a1'"}, work(diffWork{tries: 3}),
	}},
	{name: "model-missing-delete-when-missing", steps: []diffStep{
		dispatchJobs(job("a").class("ScenarioModelDeleteWhenMissing").with("users", 1)), {sql: "DELETE FROM users"}, work(diffWork{}),
	}},

	// Restart and maintenance.
	{name: "restart-signal", steps: []diffStep{dispatchJobs(job("a")), {artisan: []string{"queue:restart"}}, work(diffWork{})}},
	{name: "maintenance", steps: []diffStep{dispatchJobs(job("a")), {artisan: []string{"down"}}, work(diffWork{})}},
	{name: "maintenance-up-again", steps: []diffStep{
		dispatchJobs(job("a")), {artisan: []string{"down"}}, work(diffWork{}), {artisan: []string{"up"}}, work(diffWork{}),
	}},
	{name: "maintenance-forced", steps: []diffStep{dispatchJobs(job("a")), {artisan: []string{"down"}}, work(diffWork{force: true})}},

	// Job middleware in the command (through()): PHP's and Go's worker take and count the same
	// cache keys.
	{name: "middleware-overlap", steps: []diffStep{dispatchJobs(job("a").with("middleware", "overlap:k")), work(diffWork{})}},
	{name: "middleware-throttle-then-ok", steps: []diffStep{
		dispatchJobs(job("a", "throw", "ok").with("middleware", "throttle:2:1:0")), work(diffWork{tries: 3}),
	}},
	{name: "middleware-throttle-counted", steps: []diffStep{
		dispatchJobs(job("a", "throw").with("middleware", "throttle:5:1:0").with("tries", 2)), work(diffWork{}),
	}},
	{name: "middleware-rate-limited-dont-release", steps: []diffStep{
		dispatchJobs(job("a").with("middleware", "rate-limited:dont-release"), job("b").with("middleware", "rate-limited:dont-release"),
			job("c").with("middleware", "rate-limited:dont-release")),
		work(diffWork{}),
	}, goConfig: interopLimiter},
	// The same middleware over the array store: each worker process's own limits and locks.
	{name: "middleware-throttle-counted-array-store", env: []string{"CACHE_DRIVER=array"}, steps: []diffStep{
		dispatchJobs(job("a", "throw").with("middleware", "throttle:5:1:0").with("tries", 2)), work(diffWork{}),
	}},
	{name: "middleware-rate-limited-array-store", env: []string{"CACHE_DRIVER=array"}, steps: []diffStep{
		dispatchJobs(job("a").with("middleware", "rate-limited:dont-release"), job("b").with("middleware", "rate-limited:dont-release"),
			job("c").with("middleware", "rate-limited:dont-release")),
		work(diffWork{}), dispatchJobs(job("d").with("middleware", "rate-limited:dont-release")), work(diffWork{}),
	}, goConfig: interopLimiter},
}

// interopLimiter gives the Go worker the limits of testdata/laravel's "interop" rate limiter.
func interopLimiter(c *worker.Config) {
	c.RateLimiters = map[string][]worker.RateLimit{"interop": {{Allow: 2, Per: time.Minute}}}
}
