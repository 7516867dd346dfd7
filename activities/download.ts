// Download: stream the finished video into storage, heartbeating the byte count. A retried attempt
// resumes from the partial write the last one kept (local storage), with Range, only when that part
// was written for the same task on the same gateway; the whole stored file is checked as a video
// before it is committed (docs/files.md).
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { storedVideoCheck } from '../gateway/video-check';
import { DEFAULT_MAX_VIDEO_BYTES } from '../jobfile/values';
import type { JobSettings, Protocol } from '../jobfile/plan';
import { gatewayFor, storageFor } from './context';
import { FailureType } from '../domain/failures';
import { extensionFor } from '../domain/output';
import { finalFailure, translated } from './failures';
import { withJobWideEvidence } from './job-wide-evidence';
import { DownloadMeter, metricsHere } from './metrics';

export interface DownloadInput {
  settings: JobSettings;
  taskId: string;
  protocol: Protocol;
  resultUrl?: string;
  outputName: string;
}

export interface DownloadedVideo {
  file: string;
  location: string;
  bytes: number;
  sha256: string;
  /** The base address the video came through; absent when it came from a CDN's result_url. */
  baseUrl?: string;
  /** The origin that served the bytes: a base address, or a CDN's. */
  servedBy: string;
}

interface DownloadHeartbeat {
  bytes: number;
  validator?: string;
}

/**
 * Who a partial write belongs to: the task, on this gateway (its base addresses; a task id is only
 * unique on the gateway that issued it). Hashed: the record beside the part carries no addresses.
 */
export function partOwner(input: Pick<DownloadInput, 'settings' | 'taskId' | 'protocol'>): string {
  const where = JSON.stringify([input.protocol, input.taskId, [...input.settings.gateway.baseUrls].sort()]);
  return `task ${JSON.stringify(input.taskId)} sha256:${createHash('sha256').update(where).digest('hex')}`;
}

export function downloadVideo(input: DownloadInput): Promise<DownloadedVideo> {
  return translated(async () => {
    const context = Context.current();
    const storage = storageFor(input.settings.output);
    const guess = `${input.outputName}.mp4`;
    const owner = partOwner(input);
    // A part of another task (or one planted in a handed folder) is not resumed: it is started over.
    const kept = await storage.partialBytes(guess, owner);
    // The last attempt's heartbeat names the version of the file its partial bytes belong to:
    // resuming with If-Range makes a server that changed the file send all of it again.
    const earlier = context.info.heartbeatDetails as DownloadHeartbeat | undefined;
    const video = await withJobWideEvidence(input.settings, `the download of task ${input.taskId}`, () =>
      gatewayFor(input.settings).openVideo(
        { taskId: input.taskId, protocol: input.protocol, resultUrl: input.resultUrl },
        { offset: kept, ifRange: kept > 0 ? earlier?.validator : undefined, signal: context.cancellationSignal },
      ),
    );
    const maxBytes = input.settings.output.maxBytes ?? DEFAULT_MAX_VIDEO_BYTES;
    if (video.totalBytes !== undefined && video.totalBytes > maxBytes) {
      video.body.destroy();
      throw finalFailure(
        FailureType.videoTooLarge,
        `the video is declared as ${video.totalBytes} bytes, more than output.max_bytes (${maxBytes}): refused before the first byte`,
      );
    }
    const name = `${input.outputName}${extensionFor(video.contentType)}`;
    // The server ignored Range (or the type changed): start the file over.
    if (kept > 0 && (video.offset === 0 || name !== guess)) await storage.discardPartial(guess);
    const meter = new DownloadMeter(metricsHere(), video.offset);
    const written = await storage
      .write(name, video.body, {
        resumeFrom: video.offset,
        expectedBytes: video.totalBytes,
        maxBytes,
        partOwner: owner,
        overwrite: input.settings.output.overwrite === true,
        checkStart: storedVideoCheck(name),
        onProgress: (bytes) => {
          meter.progress(bytes);
          context.heartbeat({ bytes, validator: video.validator } satisfies DownloadHeartbeat);
        },
      })
      .finally(() => meter.flush());
    return {
      file: written.name,
      location: written.location,
      bytes: written.bytes,
      sha256: written.sha256,
      baseUrl: video.baseUrl,
      servedBy: new URL(video.source).origin,
    };
  });
}
