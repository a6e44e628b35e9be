import {
  isGrpcServiceError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import type { RunStreamBatch } from '../../src/stream/run-stream-store.js';
import type { RunExecutionOrder } from '../../src/stream/ui-chunks.js';

/**
 * The most executions one reader asks Temporal about. A chain rarely has more than a few within
 * the stream's retention; rows planted under the stream's key with made-up executions cost at most
 * this many `describe` calls per reader, and the executions past it count as unknown.
 */
const MAX_EXECUTIONS_ASKED = 1000;

/** gRPC's INVALID_ARGUMENT: what the server answers for a run id that is no run id. */
const INVALID_ARGUMENT = 3;

/**
 * The start time of each execution a run stream reader meets, as Temporal reports it (`describe`
 * of that run, once per run id): the {@link RunExecutionOrder} of the reader's `RunStreamUIState`.
 * A reset's new execution starts at the reset, after everything the old branch was started with,
 * and a continue-as-new's or retry's after the run it follows, so later start means newer, by the
 * server's clock alone (no worker's). An execution Temporal does not know as one of the chain's (a
 * made-up or malformed run id in a planted row, a run of another chain, a run Temporal already
 * deleted) is unknown: older than every execution it knows.
 */
export class ExecutionStarts {
  private readonly starts = new Map<string, number | undefined>();
  private asked = 0;

  /**
   * @param chain the chain's first execution run id; a run whose `firstRunId` differs is another
   *   chain's (the workflow id started again). Undefined: a server that does not say; any run of
   *   the workflow id counts.
   */
  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    private readonly chain: string | undefined,
    private readonly signal: AbortSignal,
  ) {}

  /** The order for `RunStreamUIState`: the start time in ms of each execution learnt so far. */
  readonly order: RunExecutionOrder = (execution) => this.starts.get(execution);

  /** Takes the start of the run `description` describes (one asked anyway), if it is the chain's. */
  note(description: WorkflowExecutionDescription): void {
    this.starts.set(description.runId, this.startOf(description));
  }

  /** Asks Temporal about the executions of `batches` not asked about yet. */
  async learn(batches: readonly RunStreamBatch[]): Promise<void> {
    for (const { execution } of batches) {
      if (this.starts.has(execution)) continue;
      // An empty run id would describe the workflow id's latest run, whichever it is.
      if (execution.length === 0 || this.asked >= MAX_EXECUTIONS_ASKED) {
        this.starts.set(execution, undefined);
        continue;
      }
      this.asked++;
      const handle = this.client.workflow.getHandle(this.workflowId, execution);
      const description = await this.client.withAbortSignal(this.signal, () => handle.describe()).catch(unknownRun);
      this.starts.set(execution, description?.runId === execution ? this.startOf(description) : undefined);
    }
  }

  private startOf(description: WorkflowExecutionDescription): number | undefined {
    const first = description.raw.workflowExecutionInfo?.firstRunId;
    const other = this.chain !== undefined && typeof first === 'string' && first.length > 0 && first !== this.chain;
    return other ? undefined : description.startTime.getTime();
  }
}

/** Undefined for a run Temporal does not have (or a run id it refuses); any other failure is thrown. */
function unknownRun(error: unknown): undefined {
  if (error instanceof WorkflowNotFoundError) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  if (isGrpcServiceError(cause) && Number(cause.code) === INVALID_ARGUMENT) return undefined;
  throw error;
}
