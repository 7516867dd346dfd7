// jobfile/chains.ts
/** How an item uses another item of its job (docs/chains.md). */
export type NeedUse = 'last_frame' | 'frame' | 'video' | 'after';
export type FrameRole = 'first_frame' | 'last_frame' | 'reference_image';
/** One thing an item waits on: another item of the same plan, by its item key. */
export interface ItemNeed {
  /** The item key of the item it needs, resolved within the same matrix combination (take 1, or the kept take once picks exist). */
  key: string;
  use: NeedUse;
  /** Seconds into the needed item's video, for `use: 'frame'`. */
  at?: number;
  /** The role the frame is sent as (default first_frame); absent for 'video' and 'after'. */
  role?: FrameRole;
}
/** A job-level assembly (`assemble:`): the item keys in order, cut into one file. */
export interface AssemblySpec {
  name: string;
  keys: string[];
  crossfadeSec?: number;
}
