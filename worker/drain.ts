// A worker's stop (docs/deploy.md, "Drain"): once its shutdown grace is over, the activities still
// running are cancelled. Each one then fails with what the cut looked like from inside (a download's
// request aborted: `aborted`, which is final when the job asked for it), and a final failure would
// end the item although nothing is wrong with it. A cut made by a stopping worker is not the item's
// fault: its failure is left retryable, so Temporal hands the activity to another worker (a download
// resumes from the bytes it kept). Creates are not affected: they have one attempt whatever the
// flag says, and the workflow decides from the failure's type (docs/deploy.md).
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { retryableAgain } from '../activities/failures';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptors, Next } from '@temporalio/worker';

export class WorkerStopIsNotFinal implements ActivityInboundCallsInterceptor {
  constructor(private readonly context: Context) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (error) {
      if (this.context.cancellationDetails?.workerShutdown && error instanceof ApplicationFailure && error.nonRetryable) {
        throw retryableAgain(error, 'cut by a stopping worker; another worker takes it over');
      }
      throw error;
    }
  }
}

export function drainInterceptors(context: Context): ActivityInterceptors {
  return { inbound: new WorkerStopIsNotFinal(context) };
}
