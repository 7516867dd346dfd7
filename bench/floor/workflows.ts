// The Temporal floor: workflows with exactly the shape of reelflow's (a parent keeping a window of
// children; each child: create activity, one timer, a check local activity, download activity, a
// record local activity, a signal to the parent) whose activities do nothing. What they reach on
// this machine is the most any design with one child workflow per item can reach here: the
// difference to reelflow's figure is reelflow's own cost.
import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';

export interface FloorActivities {
  noop(): Promise<void>;
}

const doneSignal = defineSignal('floorItemDone');
const remote = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function FloorItem(parentId: string, firstCheckMs: number): Promise<void> {
  await remote.noop(); // create
  await sleep(firstCheckMs);
  await local.noop(); // status check
  await remote.noop(); // download
  await local.noop(); // manifest line
  await getExternalWorkflowHandle(parentId).signal(doneSignal);
}

/** Continues as new past this many events, as reelflow's job does (a long history slows every task). */
const HISTORY_BUDGET = 8_000;

export async function FloorJob(
  items: number,
  window: number,
  firstCheckMs: number,
  carried = { inFlight: 0, done: 0, started: 0 },
): Promise<number> {
  const self = workflowInfo().workflowId;
  let { inFlight, done, started } = carried;
  setHandler(doneSignal, () => {
    inFlight -= 1;
    done += 1;
  });
  while (started < items) {
    await condition(() => inFlight < window);
    const batch = Math.min(window - inFlight, items - started);
    const starts: Array<Promise<unknown>> = [];
    for (let i = 0; i < batch; i++) {
      inFlight += 1;
      starts.push(
        startChild(FloorItem, {
          workflowId: `${self}/${started++}`,
          args: [self, firstCheckMs],
          parentClosePolicy: ParentClosePolicy.ABANDON,
        }),
      );
    }
    await Promise.all(starts);
    if (workflowInfo().historyLength > HISTORY_BUDGET) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof FloorJob>(items, window, firstCheckMs, { inFlight, done, started });
    }
  }
  await condition(() => done === items);
  return done;
}
