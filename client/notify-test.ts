// `reelflow notify test TARGET` (docs/notifications.md): a sample job.ended event sent to a target of
// the user's notify.yaml, exactly as a job's would go (signed, shaped for Slack or ntfy). Nothing is
// retried: the point is to see the first answer.
import { randomBytes } from 'node:crypto';
import { sendEvent } from '../activities/notify';
import { sampleEvent } from '../activities/notify-event';
import { DeliveryError, hostOf } from '../activities/notify-send';
import { NotifySettingsError, readNotifySettings } from '../jobfile/notify-settings';
import { UsageError } from './errors';

export interface SampleDelivery {
  kind: string;
  host: string;
  webhookId: string;
  /** Sends it once: the receiver's answer, or why it was not delivered. */
  send(): Promise<{ delivered: true; status: number; body: string } | { delivered: false; message: string }>;
}

/** The target `name` of the user's notify.yaml, ready to send a sample to; exit 2 when it has none. */
export function sampleDelivery(name: string): SampleDelivery {
  let settings;
  try {
    settings = readNotifySettings();
  } catch (error) {
    if (error instanceof NotifySettingsError) throw new UsageError(error.message);
    throw error;
  }
  const target = settings.targets.get(name);
  if (!target) {
    const defined = [...settings.targets.keys()];
    throw new UsageError(
      `no target ${JSON.stringify(name)} in ${settings.path}${defined.length ? ` (defined: ${defined.join(', ')})` : ''}`,
    );
  }
  const webhookId = `msg_test_${randomBytes(8).toString('hex')}`;
  return {
    kind: target.kind,
    host: hostOf(target.url),
    webhookId,
    async send() {
      try {
        const answer = await sendEvent(settings, name, sampleEvent(), webhookId);
        return { delivered: true, status: answer.status, body: answer.body };
      } catch (error) {
        if (!(error instanceof DeliveryError)) throw error;
        return { delivered: false, message: error.message };
      }
    },
  };
}
