// Still frames out of a stored video, by ffmpeg: the exact last decoded frame (what a shot that
// continues another starts from, docs/chains.md) and the frame at a given time. Frames are written
// as PNG, which keeps the decoded picture without a second lossy step.
import { rm, stat } from 'node:fs/promises';
import { MediaToolError, runTool } from './run';

/** How long one extraction may take: a whole clip is decoded for its last frame. */
const TOOL_TIMEOUT_MS = 120_000;

/** ffmpeg could not make the frame: no video stream, a time past the end, a damaged file, no ffmpeg. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** ffmpeg through media/run.ts (a deadline for its process group, its stderr's tail), failing as FrameError. */
async function ffmpeg(args: string[]): Promise<void> {
  try {
    await runTool('ffmpeg', args, { timeoutMs: TOOL_TIMEOUT_MS });
  } catch (error) {
    throw error instanceof MediaToolError ? new FrameError(error.message) : error;
  }
}

/** The first video stream's frames, written as one PNG at `pngPath` (each frame replaces the last). */
const pngOut = (pngPath: string): string[] => ['-map', '0:v:0', '-update', '1', '-f', 'image2', '-c:v', 'png', pngPath];

/**
 * How much of the clip's end is decoded for its last frame. ffmpeg seeks to the key frame before
 * this point and decodes every frame from there, so the last one is exact; encoding each decoded
 * frame as PNG is what costs, and a whole 10 s clip took 17 s at load 5 where its last second took 2.
 */
const TAIL_SECONDS = 1;

/**
 * Writes the video's last decoded frame to `pngPath`. Every frame of the clip's last second is
 * decoded and each one replaces the file (`-update 1`), so what stays is the last frame a player
 * shows, not the frame a seek from the end lands near. When the seek leaves no video frame (a video
 * stream that ends before the file does, say, when the sound runs longer), the whole clip is decoded.
 */
export async function lastFrame(videoPath: string, pngPath: string): Promise<void> {
  await rm(pngPath, { force: true });
  // Every decoded frame as it is: none dropped or repeated to meet an output rate.
  const decodeFrom = (seek: string[]) => ffmpeg([...QUIET, ...seek, '-i', videoPath, '-fps_mode', 'passthrough', ...pngOut(pngPath)]);
  const tail = await decodeFrom(['-sseof', `-${TAIL_SECONDS}`]).then(
    () => sizeOf(pngPath),
    () => 0,
  );
  if (tail > 0) return;
  await decodeFrom([]);
  await mustExist(pngPath, `${videoPath} has no video frame to take`);
}

/**
 * Writes the frame shown at `seconds` into the video (the first frame whose time is at or after it)
 * to `pngPath`. A time past the last frame is refused, not answered with the last frame.
 */
export async function frameAt(videoPath: string, seconds: number, pngPath: string): Promise<void> {
  if (!Number.isFinite(seconds) || seconds < 0) throw new FrameError(`a frame's time must be 0 s or more, not ${seconds}`);
  // Before -i: ffmpeg seeks to the key frame before, then decodes and drops frames up to the time exactly.
  await ffmpeg([...QUIET, '-ss', seconds.toFixed(6), '-i', videoPath, '-frames:v', '1', ...pngOut(pngPath)]);
  await mustExist(pngPath, `${videoPath} has no frame at ${seconds} s (past its end?)`);
}

const QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];

/** ffmpeg exits 0 having written nothing when the input has no frame to give. */
/** The file's size, 0 when it is not there. */
function sizeOf(path: string): Promise<number> {
  return stat(path).then(
    (st) => st.size,
    () => 0,
  );
}

async function mustExist(path: string, message: string): Promise<void> {
  if ((await sizeOf(path)) === 0) throw new FrameError(message);
}
