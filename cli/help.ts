// The --help text of every command, kept apart from the commands so `--help` loads nothing heavy.
import { ENV } from './settings.js';

export const WORKER_HELP = `Usage: chamvi worker --agents <module> --store <sqlite path | postgres url> [options]

Runs a Temporal worker for the agents a module exports, recording effects in the given store.
Every worker of a task queue must share one store (PostgreSQL across machines).

Options:
  --agents <module>       module exporting agents (defineAgent results), or a default array of
                          agents or { agent, tools, toolDefaults, allow } registrations   [${ENV.agents}]
  --store <spec>          effect store: ./effects.db, sqlite:effects.db, postgres://user@host/db [${ENV.store}]
  --stream <spec|store>   write what model steps stream (text, tool calls) to this store for
                          chamvi run --wait and UI streams; "store": the effect store (default none) [${ENV.stream}]
  --task-queue <queue>    task queue to poll (default chamvi)                         [${ENV.taskQueue}]
  --address <host:port>   Temporal frontend (default localhost:7233)                  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)                        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help

Prints "ready" once it polls. Stops cleanly on SIGINT or SIGTERM.`;

export const RUN_HELP = `Usage: chamvi run <agent> --prompt <text> [options]

Starts a run of a registered agent as a Temporal workflow (a worker serving the agent must poll
the task queue: chamvi worker). Prints the workflow id and the run id (the prefix of its effect keys).

Options:
  --prompt <text>         the user prompt (required)
  --workflow-id <id>      workflow id (default agent-<agent>-<uuid>); starting an id again after
                          its run closed is a new run with a new run id
  --wait                  wait for the result; print the final text and every effect call of the
                          run (executed, reconciled, recorded, failed, denied); exits 1 when a call
                          failed, naming it, or when no worker polls the task queue; while a call
                          waits for approval, prints "waiting for approval: chamvi approve <workflow>
                          <call>" once per call (on stderr with --json)
  --json                  with --wait: print the result as JSON
  --stream <spec|store>   with --wait: print the text as it streams, from the workers' run stream
                          (their --stream; "store": CHAMVI_STORE's)                    [${ENV.stream}]
  --task-queue <queue>    task queue (default chamvi)                 [${ENV.taskQueue}]
  --address <host:port>   Temporal frontend (default localhost:7233)  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help`;

export const EFFECTS_HELP = `Usage: chamvi effects <run id | workflow id> --store <sqlite path | postgres url> [options]

Prints the effect store's records of a run as a table: tool, key, outcome (executed: the tool ran;
reconciled: alreadyApplied found the effect after a crash), attempts, and when it was recorded:
the words of chamvi run --wait and the progress query.
Given a workflow id, resolves its first run id (the run id effect keys start with) through the
Temporal server, when one is reachable.

Options:
  --store <spec>          effect store: ./effects.db, sqlite:effects.db, postgres://user@host/db [${ENV.store}]
  --json                  print the records as JSON
  --address <host:port>   Temporal frontend (default localhost:7233)  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help

Exits 1 when the store holds no record for the run.`;

export const SHOW_HELP = `Usage: chamvi show <workflow id> --store <sqlite path | postgres url> [options]

Prints an agent run's conversation, oldest message first, read from the effect store the workers
keep it in (the event history holds only a reference to it): each message's role and text, its
tool calls (→) and tool results (←), long values cut. Reads the run's output once it completed,
else its progress query (a worker must poll), else its history. When the run compensated its
effects (compensateOn) or was rolled back (rollbackRun), a last section lists each undone call:
compensated, or compensation-failed with its attempts and last error (the rollback is incomplete).

Options:
  --store <spec>          effect store: ./effects.db, sqlite:effects.db, postgres://user@host/db [${ENV.store}]
  --json                  print the messages as JSON, whole (with the effects when any was compensated)
  --address <host:port>   Temporal frontend (default localhost:7233)  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help`;

export const MAIN_HELP = `Usage: chamvi <command> [options]

Run AI SDK agents as Temporal workflows with effect tools (side effects applied at most once).

Commands:
  worker     run a worker for the agents a module exports
  run        start an agent run (a workflow); --wait prints its result and effects
  effects    print the effect store's records of a run
  show       print a run's conversation from the effect store
  approvals  list a run's tool calls waiting for approval
  approve    approve (or --deny) a pending tool call; needs CHAMVI_APPROVAL_SECRET

Run chamvi <command> --help for a command's options.
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE (and the other TEMPORAL_* variables
of @temporalio/envconfig), CHAMVI_STORE, CHAMVI_TASK_QUEUE, CHAMVI_AGENTS, CHAMVI_DATA_CONVERTER.`;
