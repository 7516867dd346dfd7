// Every patch of the workflows' code, in one ledger: what it changed, since when, and when it may
// be retired. Workflow code asks `hasPatch(id)`, never `patched()` itself (a lint rule holds it), so
// an id not written here does not compile. The retirement policy is in ARCHITECTURE.md, "Workflow
// versions": a patch becomes `deprecatePatch` once no run started before it can still be running and
// its pre-patch histories leave test/fixtures/histories, and goes a release after that.
import { patched } from '@temporalio/workflow';

interface Patch {
  /** The day the patched branch was first released (main's commit date). */
  since: string;
  /** What a run from before it still does, and what the patch changed. */
  changed: string;
}

export const PATCHES = {
  'create-again-when-provably-unsent': {
    since: '2026-11-22',
    changed: 'a create that timed out is made again when its about-to-send marker proves nothing was sent; before, the item ended unknown',
  },
  'manifest-snapshot-at-end': {
    since: '2026-11-24',
    changed: 'every way a job ends writes the manifest snapshot (one file at the output location)',
  },
  'already-started-child-asks-its-state': {
    since: '2026-11-24',
    changed: "an item whose workflow id an earlier run holds asks that workflow's state instead of counting it failed",
  },
  'poll-backoff-on-unchanged-progress': {
    since: '2026-11-24',
    changed: 'a status reading that stood unchanged lengthens the next wait; before, waits followed the fixed schedule',
  },
  'status-check-falls-back-to-activity': {
    since: '2026-11-24',
    changed: 'a quick local-activity check that fails is made again as a regular activity; before, the local activity retried',
  },
  'last-status-check-at-deadline': {
    since: '2026-11-25',
    changed: 'an item is timed_out only after a check made at or after its deadline; before, the last wait could skip it',
  },
  'job-wide-stop-lets-in-flight-finish': {
    since: '2026-11-25',
    changed:
      'every job-wide cause stops the job and lets items in flight finish; before, only auth and missing_key stopped it, canceling them',
  },
  'budget-reserved-before-each-item-starts': {
    since: '2026-11-25',
    changed: "a budget reserves each item's estimate before the item starts; before, jobs ran without a budget",
  },
  'budget-reserves-prompt-rewrites': {
    since: '2026-11-25',
    changed: "an item's reservation holds its prompt rewrite's estimate too when the rewrite is not stored yet",
  },
  'shared-limit-permit': {
    since: '2026-11-25',
    changed: "concurrency.shared: an item holds a permit of its key's limiter workflow from its first call to its end",
  },
  'job-wide-cause-leaves-item-not-started': {
    since: '2026-11-25',
    changed: 'an item stopped by a job-wide cause before any create writes no row (not started); before, it recorded a failed row',
  },
  'ask-the-task-an-item-holds': {
    since: '2026-11-25',
    changed: 'an item whose earlier run holds a task of the same protocol asks that task before creating another',
  },
  'billed-never-below-price': {
    since: '2026-11-27',
    changed: "a gateway's billed figure below the user's price is charged at the price; before, the billed figure counted",
  },
  'items-counted-by-their-place-in-the-plan': {
    since: '2026-11-28',
    changed: "the window's cursor, skipped and not-started counts follow each item's place in the plan; before, the index takes share",
  },
  'one-rewrite-per-prompt-text': {
    since: '2026-11-28',
    changed: 'the takes of one prompt text share one rewrite, made by a RewriteWorkflow per text; before, each take paid its own',
  },
  'job-events-out': {
    since: '2026-11-28',
    changed:
      'a job with notify targets asks a worker which events each takes, and starts an abandoned NotifyWorkflow per event (job.started, item.failed, job.ended); before, no job had targets',
  },
  'callback-wakes-status-check': {
    since: '2026-11-28',
    changed:
      'a render whose create carried a callback address waits for a callback or polling.backstop before each check; before, the fixed schedule',
  },
  'job-ended-spend-from-ledger': {
    since: '2026-11-28',
    changed:
      "job.ended reads the job's spend ledger (an activity) for spend_usd, as status shows it; before, the budget's count, null without a budget",
  },
  'films-assembled': {
    since: '2026-11-28',
    changed:
      'a job with assemble: entries cuts each film from its clips at its end (an assembleFilm activity per film); before, no job had films',
  },
  'items-wait-for-their-needs': {
    since: '2026-11-28',
    changed:
      'an item that needs others waits in the window\'s "not ready yet" set while the items behind it start, and ends blocked when a need does not succeed; before, no item had needs',
  },
  'blocked-items-get-a-manifest-row': {
    since: '2026-11-28',
    changed:
      'an item that ends blocked gets a manifest row (state blocked, blocked_by its need) through a recordItem local activity; before, it had none and readers took it for not rendered',
  },
} as const satisfies Record<string, Patch>;

export type PatchId = keyof typeof PATCHES;

/** `patched(id)` for an id of the ledger: true in runs that reach this point with the new code. */
export function hasPatch(id: PatchId): boolean {
  return patched(id);
}
