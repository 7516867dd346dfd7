// `reelflow server`: the embedded Temporal development server in the foreground, with its web UI.
import type { Command } from 'commander';
import { ensureDevServer } from '../../worker/dev-server';
import { stateDirectory } from '../../worker/state-dir';

export function registerServerCommand(program: Command): void {
  program.command('server')
    .description('run the embedded Temporal development server in the foreground (state in the state directory)')
    .option('--port <n>', 'gRPC port (default 7233, or a free one)')
    .option('--ui-port <n>', 'web UI port (default 8233, or a free one)')
    .action(async (options: { port?: string; uiPort?: string }) => {
      const stateDir = stateDirectory();
      const server = await ensureDevServer({
        stateDir, foreground: true,
        port: options.port ? Number(options.port) : undefined, uiPort: options.uiPort ? Number(options.uiPort) : undefined,
      });
      if (!server.owned) {
        process.stderr.write(`reelflow server: already running for ${stateDir} at ${server.address} (web UI ${server.uiUrl})\n`);
        return;
      }
      process.stderr.write(`reelflow server: Temporal at ${server.address}, web UI ${server.uiUrl}, state in ${stateDir}\n` +
        `  other terminals use it automatically (same REELFLOW_STATE_DIR). Ctrl-C stops it.\n`);
      await new Promise<void>((resolve) => { process.once('SIGINT', resolve); process.once('SIGTERM', resolve); });
      await server.stop();
    });
}
