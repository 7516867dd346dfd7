// The gateway's pool events as log lines (docs/logs.md): failovers and cooldowns with the item whose
// call caused them, and each base address's outage as a start line, a count at most every
// OUTAGE_REPORT_MS and an end line, shared by every item of this worker process.
import { Context } from '@temporalio/activity';
import type { PoolEvent } from '../gateway/pool';
import { bounded, itemOfWorkflowId, LogEvent } from './log-events';
import { OUTAGE_REPORT_MS, OutageLog } from './outage-log';

const outages = new Map<string, OutageLog>();

/** The activity logger and the item of the call, or undefined outside an activity (every gateway call runs in one). */
function here(): { log: Context['log']; item: Record<string, string> } | undefined {
  try {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId ?? '';
    const item = itemOfWorkflowId(workflowId);
    return { log: context.log, item: item ? { jobId: item.jobId, key: item.key } : { jobId: workflowId } };
  } catch {
    return undefined;
  }
}

function outageAt(baseUrl: string): OutageLog {
  let outage = outages.get(baseUrl);
  if (!outage) {
    outage = new OutageLog({
      everyMs: OUTAGE_REPORT_MS,
      emit: ({ phase, failures, seconds, reason }) => {
        const at = here();
        if (!at) return;
        const fields = { component: 'gateway', baseUrl, failures, seconds };
        if (phase === 'started') {
          at.log.warn(`${baseUrl} unreachable (${reason ?? 'no answer'}); its calls go to another address or wait`, {
            ...fields,
            ...at.item,
            event: LogEvent.gatewayOutageStarted,
            reason,
          });
        } else if (phase === 'continues') {
          at.log.warn(`${baseUrl} still unreachable after ${seconds} s`, { ...fields, event: LogEvent.gatewayOutageContinues });
        } else {
          at.log.info(`${baseUrl} answers again after ${seconds} s`, { ...fields, event: LogEvent.gatewayOutageEnded });
        }
      },
    });
    outages.set(baseUrl, outage);
  }
  return outage;
}

export function logGatewayEvent(event: PoolEvent): void {
  if (event.type === 'recovered') {
    outageAt(event.baseUrl).recovered();
    return;
  }
  const at = here();
  if (event.type === 'failover') {
    at?.log.info(`calls move from ${event.from} to ${event.to}`, {
      component: 'gateway',
      event: LogEvent.gatewayFailover,
      ...at.item,
      from: event.from,
      to: event.to,
    });
    return;
  }
  const reason = bounded(event.reason);
  at?.log.debug(`${event.baseUrl} cooling down ${event.cooldownMs} ms`, {
    component: 'gateway',
    event: LogEvent.gatewayCooldown,
    ...at.item,
    baseUrl: event.baseUrl,
    cooldownMs: event.cooldownMs,
    consecutiveFailures: event.consecutiveFailures,
    reason,
  });
  outageAt(event.baseUrl).failed(reason);
}
