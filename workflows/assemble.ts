// The films of a job's `assemble:` entries, made when the job's items have all ended (docs/chains.md,
// "Assembly"). One assembleFilm activity per film, called by the job itself rather than by an
// AssembleWorkflow child: a film is one retry-safe unit of work on one worker (read its clips, run
// ffmpeg, store the film whole, then its record), so a workflow of its own would add an id, a start
// and a report for nothing an activity's retries and heartbeat do not already give; and the job is
// the one that knows when every clip has ended. Films are made one after another: a re-encode takes
// the worker's cores.
import { ActivityFailure, ApplicationFailure, log, workflowInfo } from '@temporalio/workflow';
import type { FilmOutcome } from '../activities/assemble';
import { bounded, LogEvent } from '../activities/log-events';
import type { JobSettings } from '../jobfile/plan';
import { filmMaking } from './activities';
import { hasPatch } from './patches';

/** What became of a film: the activity's outcome, or `failed` when ffmpeg or the storage could not make it. */
export type FilmResult = FilmOutcome | { name: string; state: 'failed'; kind: string; reason: string };

/**
 * Makes (or finds already made) each film of the job. Undefined for a job without `assemble:`,
 * which never asks the patch: its history is as before. A film that fails does not fail the job:
 * its items' outcomes stand, and the next run makes the film.
 */
export async function assembleFilms(settings: JobSettings, canceled: boolean): Promise<FilmResult[] | undefined> {
  const assemblies = settings.assemble ?? [];
  if (assemblies.length === 0 || canceled || !hasPatch('films-assembled')) return undefined;
  const results: FilmResult[] = [];
  for (const assembly of assemblies) {
    let result: FilmResult;
    try {
      result = await filmMaking.assembleFilm({ output: settings.output, assembly });
    } catch (error) {
      const cause = error instanceof ActivityFailure ? error.cause : error;
      const kind = cause instanceof ApplicationFailure ? (cause.type ?? 'error') : 'error';
      result = { name: assembly.name, state: 'failed', kind, reason: bounded((cause as Error | undefined)?.message) ?? 'unknown' };
    }
    results.push(result);
    const fields =
      'file' in result
        ? { file: result.file, bytes: result.bytes, durationSec: result.durationSec, method: result.method }
        : { reason: result.reason };
    log['file' in fields ? 'info' : 'warn']('film ended', {
      event: LogEvent.jobFilmEnded,
      jobId: workflowInfo().workflowId,
      film: result.name,
      state: result.state,
      ...fields,
    });
  }
  return results;
}
