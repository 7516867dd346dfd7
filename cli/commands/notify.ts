// `reelflow notify test TARGET` (docs/notifications.md): sends a sample job.ended event to a target
// of the user's notify.yaml, exactly as a job's would go (signed, shaped for Slack or ntfy), and
// prints the receiver's answer. Nothing is retried: the point is to see the first answer.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { sendEvent } from '../../activities/notify';
import { sampleEvent } from '../../activities/notify-event';
import { DeliveryError, hostOf } from '../../activities/notify-send';
import { NotifySettingsError, readNotifySettings } from '../../jobfile/notify-settings';
import { UsageError } from '../errors';

export function registerNotifyCommand(program: Command): void {
  const notify = program.command('notify').description('job events: test a target of your notify.yaml (docs/notifications.md)');
  notify
    .command('test')
    .description('send a sample job.ended event to TARGET and print what the receiver answered')
    .argument('<target>', 'a target name of your notify.yaml')
    .action((name: string) => notifyTest(name));
}

async function notifyTest(name: string): Promise<void> {
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
  process.stdout.write(`sending a sample job.ended to ${name} (${target.kind} at ${hostOf(target.url)}), webhook-id ${webhookId}\n`);
  try {
    const answer = await sendEvent(settings, name, sampleEvent(), webhookId);
    process.stdout.write(`${name} answered ${answer.status}${answer.body ? `: ${answer.body}` : ''}\n`);
  } catch (error) {
    if (!(error instanceof DeliveryError)) throw error;
    process.stdout.write(`not delivered: ${error.message}\n`);
    process.exitCode = 1;
  }
}
