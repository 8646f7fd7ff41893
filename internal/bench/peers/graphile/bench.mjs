// Burns down no-op jobs with graphile-worker on PostgreSQL, for artisan-go queue:bench --peers: it
// creates graphile-worker's tables in a schema of its own, adds the jobs, forks one worker process per
// --workers with the settings of graphile-worker's performance page, and stops the clock when no job
// is left in its jobs table (graphile-worker deletes a job when its completion is committed). It
// prints one JSON object: jobs, seconds, executions, summed peak RSS of the worker processes.
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { makeWorkerUtils, run } from "graphile-worker";

const { values: args } = parseArgs({
  options: {
    dsn: { type: "string", default: "postgres://postgres@127.0.0.1:5432/artisan_go_bench" },
    schema: { type: "string", default: "graphile_bench" },
    jobs: { type: "string", default: "10000" },
    workers: { type: "string", default: "1" },
    child: { type: "boolean", default: false },
  },
});

// The performance page's configuration (worker.graphile.org/docs/performance).
const preset = {
  worker: {
    connectionString: args.dsn,
    schema: args.schema,
    concurrentJobs: 24,
    maxPoolSize: 25,
    localQueue: { size: 500 },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  },
};

function peakRSSMB() {
  const m = readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+)/);
  return m ? Number(m[1]) / 1024 : 0;
}

async function child() {
  let executions = 0;
  let runner;
  process.on("message", async (msg) => {
    if (msg === "go") {
      runner = await run({ preset, noHandleSignals: true, taskList: { noop: async () => { executions++; } } });
    } else if (msg === "stop") {
      await runner.stop();
      process.send({ executions, rss: peakRSSMB() }, () => process.exit(0));
    }
  });
  process.send("ready");
}

async function parent() {
  const jobs = Number(args.jobs);
  const workers = Number(args.workers);
  const admin = new pg.Client({ connectionString: args.dsn });
  await admin.connect();
  await admin.query(`drop schema if exists "${args.schema}" cascade`);
  const utils = await makeWorkerUtils({ preset });
  await utils.migrate();
  for (let n = 0; n < jobs; n += 5000) {
    const specs = [];
    for (let i = n; i < Math.min(n + 5000, jobs); i++) specs.push({ identifier: "noop", payload: { n: i } });
    await utils.addJobs(specs);
  }
  await utils.release();
  const children = [];
  for (let i = 0; i < workers; i++) {
    // Worker logs go to standard error, the result alone to standard output.
    const c = fork(new URL(import.meta.url).pathname, [...process.argv.slice(2), "--child"], { stdio: ["ignore", 2, 2, "ipc"] });
    await new Promise((resolve) => c.once("message", resolve));
    children.push(c);
  }
  // The poll below is the bench's, not graphile-worker's: keep it on the index however fresh the
  // statistics.
  await admin.query("set enable_seqscan = off");
  const start = process.hrtime.bigint();
  for (const c of children) c.send("go");
  const table = `"${args.schema}"._private_jobs`;
  for (;;) {
    // In primary-key order: the index scan skips the deleted jobs' entries once marked dead.
    const { rowCount } = await admin.query(`select id from ${table} order by id limit 1`);
    if (rowCount === 0) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  let executions = 0;
  let rss = 0;
  await Promise.all(children.map((c) => new Promise((resolve) => {
    c.once("message", (m) => { executions += m.executions; rss += m.rss; resolve(); });
    c.send("stop");
  })));
  await admin.end();
  console.log(JSON.stringify({ system: "graphile-worker", jobs, workers, seconds, executions, peak_rss_mb: rss }));
}

(args.child ? child() : parent()).catch((err) => {
  console.error("graphile-worker:", err);
  process.exit(1);
});
