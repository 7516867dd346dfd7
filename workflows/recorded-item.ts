// What a manifest row records of its item (docs/takes.md): its take, group, placeholder values and
// what was asked. A render's row and a blocked item's row are filled from it the same way.
import type { RecordedItem } from '../activities/record';
import type { PlanItem } from '../jobfile/plan';

export function recordedItem(item: Pick<PlanItem, 'take' | 'group' | 'vars' | 'redoOf' | 'request'>): RecordedItem {
  const { take, group, vars, redoOf, request } = item;
  const asked = {
    protocol: request.protocol,
    seed: request.seed,
    seconds: request.seconds,
    ratio: request.ratio,
    resolution: request.resolution,
    size: request.size,
  };
  return { take, group, vars, redoOf, request: asked };
}
