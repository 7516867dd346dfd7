// Fixtures shared by the storage tests.
import { Readable } from 'node:stream';
import type { ManifestRow } from '../../storage/manifest';

/** Yields `data` in chunks, then fails with `error` (a download cut mid-stream) if given. */
export function chunked(data: Buffer, chunk = 64 * 1024, error?: Error): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += chunk) {
        yield data.subarray(i, i + chunk);
        await new Promise((r) => setImmediate(r));
      }
      if (error) throw error;
    })(),
  );
}

/** A manifest row for item `n`; `extra` overrides any field. */
export function manifestRow(n: number, extra: Partial<ManifestRow> = {}): ManifestRow {
  return {
    key: `k${n}`, id: `item-${n}`, index: n, state: 'succeeded', model: 'veo', protocol: 'general', prompt: `prompt ${n}`,
    task_id: `t${n}`, base_url: 'http://127.0.0.1:1', created_at: null, finished_at: new Date(0).toISOString(), polls: 1,
    file: null, bytes: null, sha256: null, error: null, ...extra,
  };
}
