// Storing a job's inputs for the workers that run it, as `run` and `schedule apply` do; finding a
// job (`JOB.yaml or JOB-ID`) is the client module's (client/jobs.ts).
import { inputLocationFor, type InputsOwner } from '../storage/inputs';
import type { Plan } from '../jobfile/plan';
import { storeJobInputs, type StoredJobInputs } from '../storage/inputs-publish';
import { StorageError } from '../storage/storage';
import { InfrastructureError, UsageError } from './errors';
import { formatBytes } from './format';

/**
 * Stores the job's inputs where workers on other machines read them (storage/inputs-publish.ts):
 * the location named by --inputs or REELFLOW_INPUTS, else beside S3 outputs (a schedule's beside
 * its day folders). Undefined when they stay at their paths (local output, no location named):
 * workers then read them there, as before.
 */
export async function storeInputsOrExplain(
  plan: Plan,
  texts: ReadonlyMap<string, string>,
  named: string | undefined,
  note: (line: string) => void,
  owner: InputsOwner = 'run',
): Promise<StoredJobInputs | undefined> {
  let location;
  try {
    location = inputLocationFor(plan.output, named ?? process.env.REELFLOW_INPUTS, owner);
  } catch (error) {
    if (error instanceof StorageError) throw new UsageError(`--inputs (or REELFLOW_INPUTS): ${error.message}`);
    throw error;
  }
  if (!location) return undefined;
  try {
    const stored = await storeJobInputs(plan, texts, location);
    const { files, uploaded, uploadedBytes } = stored.published;
    const sent = uploaded > 0 ? `${uploaded} object(s) uploaded, ${formatBytes(uploadedBytes)}` : 'all already there';
    note(`inputs: ${files} file(s) stored for the workers at ${stored.where} (${sent})`);
    return stored;
  } catch (error) {
    if (error instanceof StorageError) throw new InfrastructureError(error.message);
    throw error;
  }
}
