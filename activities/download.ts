// Download: stream the finished video into storage, heartbeating the byte count. A retried attempt
// resumes from the partial write the last one kept (local storage), with Range.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DEFAULT_MAX_VIDEO_BYTES } from '../jobfile/values';
import type { JobSettings, Protocol } from '../jobfile/plan';
import { gatewayFor, storageFor } from './context';
import { FailureType } from './failure-types';
import { translated } from './failures';
import { DownloadMeter, metricsHere } from './metrics';

const EXTENSIONS: Record<string, string> = {
  'video/mp4': '.mp4',
  'video/quicktime': '.mov',
  'video/webm': '.webm',
  'video/x-matroska': '.mkv',
};

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
  baseUrl: string;
  /** The origin that served the bytes: a base address, or a CDN's. */
  servedBy: string;
}

interface DownloadHeartbeat {
  bytes: number;
  validator?: string;
}

/** The extension the content type implies; `.mp4` when the server did not say. */
export function extensionFor(contentType: string | undefined): string {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return (type && EXTENSIONS[type]) ?? '.mp4';
}

export function downloadVideo(input: DownloadInput): Promise<DownloadedVideo> {
  return translated(async () => {
    const context = Context.current();
    const storage = storageFor(input.settings.output);
    const guess = `${input.outputName}.mp4`;
    const kept = await storage.partialBytes(guess);
    // The last attempt's heartbeat names the version of the file its partial bytes belong to:
    // resuming with If-Range makes a server that changed the file send all of it again.
    const earlier = context.info.heartbeatDetails as DownloadHeartbeat | undefined;
    const video = await gatewayFor(input.settings).openVideo(
      { taskId: input.taskId, protocol: input.protocol, resultUrl: input.resultUrl },
      { offset: kept, ifRange: kept > 0 ? earlier?.validator : undefined, signal: context.cancellationSignal },
    );
    const maxBytes = input.settings.output.maxBytes ?? DEFAULT_MAX_VIDEO_BYTES;
    if (video.totalBytes !== undefined && video.totalBytes > maxBytes) {
      video.body.destroy();
      throw ApplicationFailure.create({
        type: FailureType.videoTooLarge,
        nonRetryable: true,
        message: `the video is declared as ${video.totalBytes} bytes, more than output.max_bytes (${maxBytes}): refused before the first byte`,
      });
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
