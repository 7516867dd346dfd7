// `reelflow server`: the embedded Temporal development server in the foreground, with its web UI,
// until Ctrl-C (SIGINT) or SIGTERM, so a terminal or a supervisor (systemd, a container) can run it.
import type { Command } from 'commander';
import { ensureDevServer, TEMPORAL_PORT } from '../../worker/dev-server';
import { stateDirectory } from '../../worker/state-dir';
import { InfrastructureError } from '../errors';

export function registerServerCommand(program: Command): void {
  program
    .command('server')
    .description('run the embedded Temporal development server in the foreground until Ctrl-C or SIGTERM (state in the state directory)')
    .option('--ip <address>', 'address to listen on: 127.0.0.1, or 0.0.0.0 for workers on other machines', '127.0.0.1')
    .option('--port <n>', `gRPC port (default ${TEMPORAL_PORT}, or a free one)`)
    .option('--ui-port <n>', 'web UI port (default 8233, or a free one)')
    .action(async (options: { ip: string; port?: string; uiPort?: string }) => {
      const stateDir = stateDirectory();
      const server = await ensureDevServer({
        stateDir,
        foreground: true,
        ip: options.ip,
        port: options.port ? Number(options.port) : undefined,
        uiPort: options.uiPort ? Number(options.uiPort) : undefined,
      });
      if (!server.owned || !server.exited) {
        process.stderr.write(`reelflow server: already running for ${stateDir} at ${server.address} (web UI ${server.uiUrl})\n`);
        return;
      }
      process.stderr.write(
        `reelflow server: Temporal at ${server.address}, web UI ${server.uiUrl}, state in ${stateDir}\n` +
          `  other terminals use it automatically (same REELFLOW_STATE_DIR); workers elsewhere: TEMPORAL_ADDRESS=${server.address}. Ctrl-C stops it.\n`,
      );
      const signal = new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      const ended = await Promise.race([signal, server.exited.then((code) => ({ code }))]);
      if (typeof ended === 'string') {
        process.stderr.write(`reelflow server: ${ended}: stopping Temporal\n`);
        await server.stop();
        return;
      }
      throw new InfrastructureError(
        `the Temporal development server exited by itself (code ${ended.code}); its log is in ${stateDir}/temporal/server.log`,
      );
    });
}
