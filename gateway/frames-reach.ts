// Whether a chain's frames reach the provider through this gateway (docs/chains.md, "Gateways that
// drop frames"). new-api v0.10.0's Seedance channel sends its upstream only the model and the
// prompt (test/gateways/OBSERVED.md), so frame roles, reference media and return_last_frame are
// dropped there without a word. new-api says its version at its public GET /api/status; each base
// address is asked once, without the key, with a bounded answer.
import type { Plan, PlanItem } from '../jobfile/plan';
import { NEW_API_STATUS_PATH, newApiDropsSeedanceContent, newApiVersionOf } from './dialects/new-api';
import { sendOnce } from './exchange';
import { readText } from './http';
import { withProbeRoute } from './probe-transport';

const STATUS_TIMEOUT_MS = 5_000;
/** new-api's status is about 10 KB: far more is not its. */
const MAX_STATUS_BYTES = 1 << 20;
/** Items named in the warning; the rest are counted. */
const NAMED_ITEMS = 8;

/** The new-api version each base address gives at /api/status, or undefined where it is not new-api (or does not answer). */
export async function newApiVersions(bases: readonly string[], timeoutMs = STATUS_TIMEOUT_MS): Promise<(string | undefined)[]> {
  return withProbeRoute(timeoutMs, bases, {}, (route) =>
    Promise.all(
      bases.map(async (base) => {
        try {
          const { response } = await sendOnce(route, new URL(`${base}${NEW_API_STATUS_PATH}`), {
            operation: 'retrieve',
            method: 'GET',
            credential: 'none',
            headers: () => ({ accept: 'application/json' }),
            signal: AbortSignal.timeout(timeoutMs),
          });
          const text = await readText(response.body, MAX_STATUS_BYTES);
          return response.status === 200 ? newApiVersionOf(JSON.parse(text)) : undefined;
        } catch {
          return undefined;
        }
      }),
    ),
  );
}

/** What of an item depends on the gateway passing content on: frames it starts from or ends on, needs, return_last_frame. */
function sendsFrames(item: PlanItem): boolean {
  const { request } = item;
  if (request.protocol !== 'general') return false;
  if (request.returnLastFrame) return true;
  if ((item.needs ?? request.needs ?? []).some((n) => n.use !== 'after')) return true;
  return request.references.some((r) => r.role === 'first_frame' || r.role === 'last_frame');
}

/**
 * The warning for a job whose frames a base address would drop: which address, which release, and
 * the items whose frames never reach the provider. Undefined when no item sends frames or no base
 * address is such a release. Never a refusal: the renders still come, from their prompts alone.
 */
export async function framesDroppedWarning(
  plan: Pick<Plan, 'items' | 'gateway'>,
  versions?: (string | undefined)[],
): Promise<string | undefined> {
  const items = plan.items.filter(sendsFrames);
  if (items.length === 0) return undefined;
  const found = versions ?? (await newApiVersions(plan.gateway.baseUrls));
  const dropping = plan.gateway.baseUrls.flatMap((base, i) => {
    const version = found[i];
    return version !== undefined && newApiDropsSeedanceContent(version) ? [`${base} (new-api ${version})`] : [];
  });
  if (dropping.length === 0) return undefined;
  const keys = items.map((i) => i.key);
  const named = keys.slice(0, NAMED_ITEMS).join(', ') + (keys.length > NAMED_ITEMS ? ` and ${keys.length - NAMED_ITEMS} more` : '');
  return (
    `${dropping.join(', ')} sends a Seedance provider only the model and the prompt: the frames of ${named} ` +
    '(first/last frames, frames of other shots, return_last_frame) will not reach it, and each of those shots ' +
    'renders from its prompt alone. Use a gateway release that passes metadata on (docs/chains.md)'
  );
}
