// The body receiver in a process of its own: a test that measures the sender's memory then
// measures only the sender, not the receiver's decoding garbage as well (CI saw that garbage alone
// tip a 64 MiB bound). Answers every create 200 with the id `<prefix>-<n>` and reports each request
// it received to its parent over IPC.
import { created, startReceiver } from './body-receiver';

async function main(): Promise<void> {
  const prefix = process.argv[2] ?? 'task';
  const receiver = await startReceiver((res, n, got) => {
    process.send?.({ received: got });
    created(res, `${prefix}-${n}`);
  });
  // The parent's end of the channel closing is the sign to stop.
  process.on('disconnect', () => void receiver.close().then(() => process.exit(0)));
  process.send?.({ url: receiver.url });
}

void main();
