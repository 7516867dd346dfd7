// CPU cost of the client per status check (getTask), measured with process.cpuUsage over N calls
// against the simulator on loopback. The simulator runs in this process too, so a baseline of the
// same number of raw undici GETs is measured and subtracted; the last line is one JSON object.
import { Agent, request } from 'undici';
import { createGatewayClient } from '../gateway/index';
import { startSimulator } from '../sim/index';

const N = Number(process.env.BENCH_CALLS ?? 3000);
const KEY = 'sk-bench-local-key';

function cpuMicros(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

async function main(): Promise<void> {
  const sim = await startSimulator({ keys: [KEY], renderMs: 3_600_000 });
  const client = createGatewayClient({ baseUrls: sim.urls, apiKey: KEY });
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  try {
    const created = await client.createTask({
      model: 'seedance-1-0-pro-250528',
      protocol: 'general',
      prompt: 'overhead',
      seconds: '5',
      references: [],
    });
    const ref = { taskId: created.taskId, protocol: 'general' as const };
    const url = `${sim.urls[0] ?? ''}/v1/video/generations/${created.taskId}`;
    const headers = { authorization: `Bearer ${KEY}` };
    for (let i = 0; i < 200; i += 1) {
      await client.getTask(ref);
      await (await request(url, { dispatcher: agent, headers })).body.text();
    }

    let t = process.cpuUsage();
    for (let i = 0; i < N; i += 1) await (await request(url, { dispatcher: agent, headers })).body.text();
    const rawUs = cpuMicros(t) / N;

    t = process.cpuUsage();
    for (let i = 0; i < N; i += 1) await client.getTask(ref);
    const clientUs = cpuMicros(t) / N;

    const overhead = Math.max(0, clientUs - rawUs);
    console.log(`raw undici GET + simulator: ${rawUs.toFixed(0)} µs CPU per call`);
    console.log(`client.getTask + simulator: ${clientUs.toFixed(0)} µs CPU per call`);
    console.log(
      JSON.stringify({
        figure: 'client_cpu_overhead_per_status_check',
        value: Number(overhead.toFixed(1)),
        unit: 'µs',
        baseline: Number(rawUs.toFixed(1)),
        ratio: Number((clientUs / rawUs).toFixed(3)),
        target: '< 1000 µs',
        meets: overhead < 1000,
        totalWithSimUs: Number(clientUs.toFixed(1)),
        calls: N,
      }),
    );
  } finally {
    await agent.close();
    await client.close();
    await sim.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
