// Resolves `JOB.yaml or JOB-ID` to the job's plan and output, for report (client/job-outcome.ts: by
// id, from the job's workflow and stored inputs, on any machine that reaches them).
import { openStorage } from '../storage';
import type { ManifestRow } from '../storage/manifest/row';
import type { Plan } from '../jobfile/plan';
import { lastPickAt, readPicks, StandingPicks } from '../storage/records/picks';
import { earlierPicked } from './report/layout';
import { readManifestRows } from '../client/manifest-rows';
import { UsageError } from '../client/errors';
import { estimatePlan } from '../client/estimate';
import { loadJobPlan, loadPlanOrExplain, looksLikeFile, pricedAsStarted, resolveJob } from '../client/jobs';
import { lookUpJob } from '../client/job-outcome';
import { openSession } from '../client/session';
import { jobSpend, type JobSpend } from '../client/spend';
import { rowsWithTakes } from '../client/takes-view';
import { readFilmRecords, type FilmRecord } from '../storage/records/films';
import { chainsOf } from './report/films';

/**
 * The job's plan, for a page that follows the job (`review`): a job file without a schedule names
 * its outputs by itself, so its page opens before the job has run at all; ids and scheduled runs
 * are found through Temporal, their plan read from the job's stored inputs (any machine can look).
 */
export async function planFor(target: string): Promise<Plan> {
  if (looksLikeFile(target)) {
    const plan = await loadPlanOrExplain(target);
    // Priced as its run priced it (docs/costs.md): the page's estimate is the one run showed.
    if (!plan.schedule) return pricedAsStarted(plan);
  }
  const session = await openSession();
  try {
    return (await loadJobPlan(await resolveJob(session.client, target))).plan;
  } finally {
    await session.close();
  }
}

export interface ReportTarget {
  job: string;
  outputDir: string;
  rows: ManifestRow[];
  /** Earlier renders that still carry a pick (their take was rendered again for a changed request). */
  earlier: ManifestRow[];
  /** The standing picks made in `reelflow review` (docs/review.md), by render. */
  picks: StandingPicks;
  /** The last pick's time: takes finished after it are new. */
  lastReviewAt?: number;
  spend?: JobSpend;
  /** The job's assembled films (storage/films.ts) and its chains of shots, as the review page shows them (docs/chains.md). */
  films: FilmRecord[];
  chains: string[][];
}

export async function resolveReportTarget(target: string): Promise<ReportTarget> {
  const { plan, outcome } = await lookUpJob(target);
  if (plan.output.storage !== 'local' || !plan.output.dir) {
    throw new UsageError(`${plan.job} writes to ${openStorage(plan.output).location}: report needs a local output directory`);
  }
  const storage = openStorage(plan.output);
  // Takes made by `run --redo`/`--only` are not in the job file's plan: shown beside their item.
  const rows = await rowsWithTakes(plan, outcome.rows, storage);
  const manifest = await readManifestRows(storage);
  const decisions = await readPicks(storage);
  const picks = StandingPicks.of(decisions, manifest);
  const lastReviewAt = lastPickAt(decisions);
  const spend = await jobSpend(plan, rows, estimatePlan(plan));
  return {
    job: plan.job,
    outputDir: plan.output.dir,
    rows,
    earlier: earlierPicked(manifest, picks),
    picks,
    ...(lastReviewAt !== undefined ? { lastReviewAt } : {}),
    ...(spend ? { spend } : {}),
    films: await readFilmRecords(storage),
    chains: chainsOf(plan.items),
  };
}
