// `reelflow notify test TARGET` (docs/notifications.md): sends a sample job.ended event to a target
// of the user's notify.yaml, exactly as a job's would go (signed, shaped for Slack or ntfy), and
// prints the receiver's answer. Nothing is retried: the point is to see the first answer.
import type { Command } from 'commander';
import { sampleDelivery } from '../../client/notify-test';

export function registerNotifyCommand(program: Command): void {
  const notify = program.command('notify').description('job events: test a target of your notify.yaml (docs/notifications.md)');
  notify
    .command('test')
    .description('send a sample job.ended event to TARGET and print what the receiver answered')
    .argument('<target>', 'a target name of your notify.yaml')
    .action((name: string) => notifyTest(name));
}

async function notifyTest(name: string): Promise<void> {
  const sample = sampleDelivery(name);
  process.stdout.write(`sending a sample job.ended to ${name} (${sample.kind} at ${sample.host}), webhook-id ${sample.webhookId}\n`);
  const answer = await sample.send();
  if (answer.delivered) {
    process.stdout.write(`${name} answered ${answer.status}${answer.body ? `: ${answer.body}` : ''}\n`);
  } else {
    process.stdout.write(`not delivered: ${answer.message}\n`);
    process.exitCode = 1;
  }
}
