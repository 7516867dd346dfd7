// Gateway activities: enhance, create, check. Thin: build the client, call it, translate errors.
// Each passes the activity's cancellation signal, so a Temporal timeout or cancel closes the socket.
import { Context, log } from '@temporalio/activity';
import type { CreatedTask, TaskStatus } from '../gateway';
import type { JobSettings, Protocol, RenderRequest } from '../jobfile/plan';
import type { RewriteCost, RewritePrice } from '../jobfile/prices';
import { RewriteStore, textToRender, type RewriteRecord } from '../storage/records/rewrites';
import { callbackUrlFor } from './callback-address';
import { gatewayFor, storageFor } from './context';
import { sendAfterMarking } from './create-marker';
import { translated } from './failures';
import { withJobWideEvidence } from './job-wide-evidence';
import { bounded, itemOfWorkflowId, LogEvent } from './log-events';
import { preflightCreate } from './preflight';
import { withStoredReferences, type JobSettingsWithInputs } from './inputs';
import { withNeededOutputs } from './needs';
import { countCheck, countCreate } from './metrics';
import { rewriteOnce, rewritePricer, type RewriteInput } from './rewrite';

export interface EnhanceInput {
  settings: JobSettings;
  prompt: string;
  /** The item's key, which finds its stored rewrite. Absent only in workflows started before the store. */
  key?: string;
  /**
   * Set by workflows since rewrites are priced from their usage: the answer is an EnhancedPrompt.
   * Absent (workflows from before): the text alone, as they expect.
   */
  withCost?: boolean;
  /** The enhance model's prices (the page's PageItem.rewritePrice); absent: the model has none. */
  price?: RewritePrice;
}

/** The item's prompt as its create sends it, and what this item's run paid for it. */
export interface EnhancedPrompt {
  prompt: string;
  /**
   * A Messages call was paid for this run of the item: made now, or by an earlier attempt of this
   * activity whose completion was lost. False: the stored rewrite of an earlier run was reused.
   */
  paid: boolean;
  /** What the paid call cost (jobfile/prices.ts rewriteCostUsd); absent when unpaid or unpriced. */
  cost?: RewriteCost;
  /** The paid call's record's `at`: the item's row names it (rewrite_at), so the call is counted once (docs/costs.md). */
  at?: string;
}

/**
 * The item's prompt as its create sends it: the stored rewrite when the item's prompt and the
 * enhance settings are the ones it was made from, else one Messages call whose answer is stored
 * first (activities/rewrite.ts, docs/enhance.md). So a retried attempt, a later run or another
 * worker pays for no second call. `key` is absent only in workflows started before the store
 * existed: they rewrite on every attempt, as they did. With `withCost`, the call this run paid for
 * is priced from the answer's usage (docs/costs.md).
 */
export function enhancePrompt(input: EnhanceInput): Promise<string | EnhancedPrompt> {
  return translated(async () => {
    const enhance = input.settings.enhance!;
    const signal = Context.current().cancellationSignal;
    const ask: RewriteInput['ask'] = (message) =>
      withJobWideEvidence(input.settings, 'the prompt rewrite (Messages)', () =>
        gatewayFor(input.settings).createMessage(message, { signal }),
      );
    const priceOf = rewritePricer(input.price, enhance, input.prompt);
    const { record, reused } = await rewriteOnce({
      key: input.key ?? '',
      prompt: input.prompt,
      enhance,
      store: input.key === undefined ? undefined : new RewriteStore(storageFor(input.settings.output)),
      ask,
      payer: { by: 'render', priceOf },
      // The answer is paid for: this render uses it even when it could not be kept for later ones.
      onStoreFailed: (error) =>
        log.warn('the prompt rewrite could not be stored; a later run will ask Messages again', {
          event: LogEvent.itemRewriteNotStored,
          jobId: itemOfWorkflowId(Context.current().info.workflowExecution?.workflowId ?? '')?.jobId,
          key: input.key,
          error: bounded(error instanceof Error ? error.message : String(error)),
        }),
    });
    const prompt = textToRender(record, input.prompt);
    if (!input.withCost) return prompt;
    if (reused && !madeByEarlierAttempt(record)) return { prompt, paid: false };
    const cost = priceOf(record.usage);
    return { prompt, paid: true, ...(cost ? { cost } : {}), at: record.at };
  });
}

/**
 * A stored record this very activity made: a retry (attempt 2 on) finds the record of the attempt
 * that asked Messages and then lost its completion (its worker died). That call was this run's.
 * Made since the activity was first scheduled; a record of `reelflow enhance` made in that window
 * counts too (a budget errs on the side of spent).
 */
function madeByEarlierAttempt(record: RewriteRecord): boolean {
  const { attempt, scheduledTimestampMs } = Context.current().info;
  const at = Date.parse(record.at);
  return attempt > 1 && Number.isFinite(at) && at >= scheduledTimestampMs;
}

export interface CreateInput {
  settings: JobSettingsWithInputs;
  request: RenderRequest;
}

export interface CreatedTaskInfo {
  taskId: string;
  baseUrl: string;
  createdAt: number;
  /** What the gateway said the create cost, USD, when it says (docs/costs.md). */
  billedUsd?: number;
  /** The create carried a callback address: a callback may wake the item's next check (docs/callbacks.md). */
  callbacks?: true;
}

/** What a status check tells the workflow: the gateway's task status without its display fields. */
export type TaskCheck = Pick<TaskStatus, 'state' | 'baseUrl' | 'progress' | 'resultUrl' | 'lastFrameUrl' | 'failReason' | 'pollAfterMs'>;

/** One create through the job's gateway client; `around` runs the call that sends it. */
function createThrough(input: CreateInput, around: (send: () => Promise<CreatedTask>) => Promise<CreatedTask>): Promise<CreatedTaskInfo> {
  return translated(async () => {
    const gateway = gatewayFor(input.settings);
    await preflightCreate(input.settings, input.request.model); // once per job per process: activities/preflight.ts
    // Local references of a job with stored inputs: their verified local copies, fetched before anything is sent.
    // A chained item's needs: frames or videos of the items it continues, made and stored first (activities/needs.ts).
    const stored = await withNeededOutputs(input.settings, await withStoredReferences(input.settings, input.request));
    const callbackUrl = callbackUrlFor(input.settings, input.request, Context.current().info.workflowExecution?.workflowId);
    const request = callbackUrl === undefined ? stored : { ...stored, callbackUrl };
    // The fresh read of the addresses after a create that found none runs inside `around`, while
    // the create's keep-alive still heartbeats.
    const created = await countCreate(input.request.model, () =>
      around(() =>
        withJobWideEvidence(input.settings, 'the create', () => gateway.createTask(request, { signal: createCancellation() }), {
          heartbeating: true,
        }),
      ),
    );
    const billed = created.billedUsd === undefined ? {} : { billedUsd: created.billedUsd };
    const callbacks = callbackUrl === undefined ? {} : { callbacks: true as const };
    return { taskId: created.taskId, baseUrl: created.baseUrl, createdAt: Date.now(), ...billed, ...callbacks };
  });
}

/**
 * What ends a create early: a cancel of the job or a timeout of the activity, never a worker's stop.
 * A create cut after it may have been sent can leave a render the gateway bills and nobody holds
 * (the item ended failed, and a re-run paid again); its answer takes seconds, so a stopping worker
 * waits for it past its shutdown grace (docs/deploy.md, Drain). A killed worker still ends it
 * unknown, through its send record (activities/create-marker.ts).
 */
function createCancellation(): AbortSignal {
  const context = Context.current();
  const create = new AbortController();
  const cancel = () => {
    if (!context.cancellationDetails?.workerShutdown) create.abort(context.cancellationSignal.reason);
  };
  if (context.cancellationSignal.aborted) cancel();
  else context.cancellationSignal.addEventListener('abort', cancel, { once: true });
  return create.signal;
}

/**
 * Creates the task, first having the server record that the request may be sent (create-marker):
 * a timeout without that record proves nothing was sent, and the workflow creates again.
 */
export function createTaskMarked(input: CreateInput): Promise<CreatedTaskInfo> {
  return createThrough(input, sendAfterMarking);
}

/**
 * The create without the record, for workflows that started before it existed (they replay the
 * name `createTask`, and their timeouts end the item unknown whatever happened). A separate name,
 * so a worker of the previous version never runs a create that a new workflow would judge by the
 * absence of a heartbeat it does not send.
 */
export function createTask(input: CreateInput): Promise<CreatedTaskInfo> {
  return createThrough(input, (send) => send());
}

export function checkTask(input: { settings: JobSettings; taskId: string; protocol: Protocol; createdAt: number }): Promise<TaskCheck> {
  return translated(async () => {
    const status = await countCheck(() =>
      withJobWideEvidence(input.settings, `the status check of task ${input.taskId}`, () =>
        gatewayFor(input.settings).getTask(
          { taskId: input.taskId, protocol: input.protocol },
          { createdAt: input.createdAt, signal: Context.current().cancellationSignal },
        ),
      ),
    );
    return {
      state: status.state,
      baseUrl: status.baseUrl,
      progress: status.progress,
      resultUrl: status.resultUrl,
      ...(status.lastFrameUrl ? { lastFrameUrl: status.lastFrameUrl } : {}),
      failReason: status.failReason,
      pollAfterMs: status.pollAfterMs,
    };
  });
}
