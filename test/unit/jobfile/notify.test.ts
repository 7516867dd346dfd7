// Notification targets (docs/notifications.md): the user's notify.yaml, and a job file's `notify:`
// naming only targets defined there, refused at its line otherwise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseJobFile } from '../../../jobfile';
import { NotifySettingsError, notifySettingsPath, parseNotifySettings, type NotifySettings } from '../../../jobfile/notify-settings';

const FILE = '/home/u/.config/reelflow/notify.yaml';

function settings(text: string): NotifySettings {
  return { path: FILE, targets: parseNotifySettings(text, FILE) };
}

const GOOD = [
  'on-call:',
  '  webhook: https://ops.example.com/reelflow',
  '  secret_env: REELFLOW_WEBHOOK_SECRET',
  '  events: [job.ended, item.failed]',
  '  retry_for: 30m',
  'studio-slack:',
  '  slack: https://hooks.slack.com/services/T000/B000/XXXX',
  'phone:',
  '  ntfy: https://ntfy.sh/my-studio-renders',
  '',
].join('\n');

const JOB = (notify: string) =>
  [
    'name: notify-unit',
    'gateway:',
    '  base_urls: [http://127.0.0.1:8787]',
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    notify,
    'items:',
    '  - prompt: a red kite',
    '',
  ].join('\n');

describe('notify settings', () => {
  it('reads webhook, slack and ntfy targets; events default to job.ended, retry_for to 1 h', () => {
    const { targets } = settings(GOOD);
    assert.deepEqual([...targets.keys()], ['on-call', 'studio-slack', 'phone']);
    const onCall = targets.get('on-call')!;
    assert.deepEqual(
      [onCall.kind, onCall.secretEnv, onCall.events, onCall.retryForMs],
      ['webhook', 'REELFLOW_WEBHOOK_SECRET', ['job.ended', 'item.failed'], 30 * 60_000],
    );
    assert.deepEqual(targets.get('studio-slack')!.events, ['job.ended']);
    assert.equal(targets.get('phone')!.retryForMs, 60 * 60_000);
  });

  it('finds the file as the key settings are found, under its own variable', () => {
    assert.equal(notifySettingsPath({ REELFLOW_NOTIFY_CONFIG: '/etc/rf/notify.yaml', XDG_CONFIG_HOME: '/x' }), '/etc/rf/notify.yaml');
    assert.equal(notifySettingsPath({ XDG_CONFIG_HOME: '/x' }), '/x/reelflow/notify.yaml');
  });

  it('refuses a wrong target at its file:line, saying what is allowed', () => {
    const cases: Array<[string, RegExp]> = [
      ['a:\n  webhook: https://x.example\n', /notify\.yaml:1:1: a: a webhook is signed \(Standard Webhooks\): add secret_env/],
      ['a:\n  slack: https://x.example\n  ntfy: https://y.example\n', /:1:1: a: give exactly one of webhook, slack or ntfy/],
      ['ok:\n  ntfy: https://n.example/t\nb:\n  ntfy: ftp://x\n', /notify\.yaml:3:1: b: ntfy must be an http\(s\) address/],
      [
        'a:\n  ntfy: https://n.example/t\n  events: [job.done]\n',
        /events must list some of job\.started, job\.ended, item\.failed; "job\.done" is none of them/,
      ],
      ['a:\n  slack: https://s.example/x\n  secret_env: S\n', /secret_env applies to a webhook only/],
      [
        'a:\n  ntfy: https://n.example/t\n  colour: red\n',
        /unknown setting "colour"; allowed: webhook, slack, ntfy, secret_env, events, retry_for/,
      ],
      ['a:\n  ntfy: https://n.example/t\n  retry_for: 3d\n', /retry_for must be a duration from 1s to 24h/],
      ['- a\n', /notify\.yaml:1:1: expected a mapping of target names/],
    ];
    for (const [text, expected] of cases)
      assert.throws(
        () => settings(text),
        (e: Error) => e instanceof NotifySettingsError && expected.test(e.message),
        text,
      );
  });
});

describe("a job file's notify:", () => {
  it('names targets the user defined: they go into the settings, by name only', () => {
    const result = parseJobFile(JOB('notify: [studio-slack, on-call, studio-slack]'), '/jobs/a.yaml', { notifySettings: settings(GOOD) });
    assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
    assert.deepEqual(result.plan.notify, ['studio-slack', 'on-call']);
  });

  it('naming a target the user did not define is refused at its line: a handed job file chooses no address', () => {
    const result = parseJobFile(JOB('notify: [on-call, attacker]'), '/jobs/a.yaml', { notifySettings: settings(GOOD) });
    assert.equal(result.ok, false);
    const errors = !result.ok ? result.errors : [];
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.deepEqual([errors[0]!.line, errors[0]!.column], [6, 19]);
    assert.match(
      errors[0]!.message,
      /notify target "attacker" not defined in \/home\/u\/\.config\/reelflow\/notify\.yaml \(defined: on-call, studio-slack, phone\)/,
    );
  });

  it('an address in place of a name is refused by the schema, and no settings at all define nothing', () => {
    const url = parseJobFile(JOB('notify: [https://evil.example/hook]'), '/jobs/a.yaml', { notifySettings: settings(GOOD) });
    assert.equal(url.ok, false);
    assert.match(!url.ok ? url.errors[0]!.message : '', /notify\[0\] must be a target name defined in your notify\.yaml|notify must be/);
    const none = parseJobFile(JOB('notify: [on-call]'), '/jobs/a.yaml', { notifySettings: { path: FILE, targets: new Map() } });
    assert.match(!none.ok ? none.errors[0]!.message : '', /not defined in .* \(it defines none\)/);
  });
});
