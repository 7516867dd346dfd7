// RewriteWorkflow: the prompt rewrite of one prompt text (docs/enhance.md), started by the render of
// the first take that asks for it, as its child, under an id named by the prompt text
// (workflows/ids.ts rewriteWorkflowId). Temporal lets one workflow run under an id at a time, on any
// worker of a fleet, so the takes of a prompt that start together make one Messages call: the
// others find the id taken, wait, and then reuse the stored record (rewriteAcrossTakes).
import { ChildWorkflowFailure, ParentClosePolicy, WorkflowIdReusePolicy, executeChild, sleep } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { EnhancedPrompt, EnhanceInput } from '../activities/render';
import { gatewayActivities } from './activities';
import { rewriteWorkflowId } from './ids';

/** The enhance activity, once: the stored rewrite of the prompt, or one Messages call stored first. */
export async function RewriteWorkflow(input: EnhanceInput): Promise<string | EnhancedPrompt> {
  return gatewayActivities(input.settings).enhance.enhancePrompt(input);
}

/** Waits between tries to start the prompt's rewrite while another take's is running: a rewrite takes seconds. */
const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 10_000;

/**
 * The rewrite of the item's prompt text, shared with every take asking at the same time: the first
 * runs RewriteWorkflow (its answer says the call was paid, so its row counts it); the others, finding
 * the id taken, start it again once that run ended and reuse what it stored (paid: false). A failed
 * rewrite fails as the enhance activity's failure, so the render ends the item as it always did.
 * The child is abandoned by its parent's end: the takes waiting for it still get its answer.
 */
export async function rewriteAcrossTakes(jobWorkflowId: string, rewriteId: string, input: EnhanceInput): Promise<string | EnhancedPrompt> {
  const workflowId = rewriteWorkflowId(jobWorkflowId, rewriteId);
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    try {
      return await executeChild(RewriteWorkflow, {
        workflowId,
        args: [input],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      });
    } catch (error) {
      if (error instanceof ChildWorkflowFailure && error.cause) throw error.cause;
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    await sleep(wait);
  }
}
