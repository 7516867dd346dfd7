// What a model takes (docs/chains.md "What a model takes"): its reference kinds, frame roles, whether
// frames and reference media may share a request, whether it returns its last frame. Stated once:
// `models.<m>` settings win, then the defaults of its family, then permissive defaults.
import type { FrameOnlyRole } from './chains';
import type { AssetKind, Protocol } from './plan';
import type { JobFileData } from './schema';

export interface ModelCapabilities {
  /** Reference kinds it takes; undefined: any (none assumed). */
  assets?: readonly AssetKind[];
  frames: readonly FrameOnlyRole[];
  mixFramesAndReferences: boolean;
  returnsLastFrame: boolean;
  /** Where each value came from, for messages: `models.<m>.frames`, or the family's defaults. */
  source: { assets: string; frames: string; mix: string; returns: string };
}

interface Family {
  name: string;
  matches: (model: string, protocol: Protocol) => boolean;
  assets?: readonly AssetKind[];
  frames: readonly FrameOnlyRole[];
  mix: boolean;
  returns: boolean;
}

/**
 * Known families. Seedance (ModelArk's content list, passed through by new-api's metadata): first and
 * last frames, never together with reference_* media, `return_last_frame`. Veo 3.1 through an
 * openai-protocol gateway: its one `input_reference` is the first frame (the protocol itself
 * carries images only, expand.ts).
 */
const FAMILIES: readonly Family[] = [
  {
    name: 'Seedance 2.x',
    matches: (m) => /seedance-2/i.test(m),
    assets: ['image', 'video', 'audio'],
    frames: ['first_frame', 'last_frame'],
    mix: false,
    returns: true,
  },
  { name: 'Seedance 1.x', matches: (m) => /seedance-1/i.test(m), frames: ['first_frame', 'last_frame'], mix: false, returns: true },
  {
    name: 'Veo 3.1 on the openai protocol',
    matches: (m, p) => p === 'openai' && /veo-3\.1/i.test(m),
    frames: ['first_frame'],
    mix: true,
    returns: false,
  },
];

/** A model the job file does not describe and no family matches: anything may be sent; the gateway decides. */
const UNKNOWN: Family = {
  name: 'models reelflow does not know',
  matches: () => true,
  frames: ['first_frame', 'last_frame'],
  mix: true,
  returns: false,
};

export function familyOf(model: string, protocol: Protocol): Family {
  return FAMILIES.find((f) => f.matches(model, protocol)) ?? UNKNOWN;
}

export function modelCapabilities(data: Pick<JobFileData, 'models'>, model: string, protocol: Protocol): ModelCapabilities {
  const entry = data.models?.[model];
  const family = familyOf(model, protocol);
  const set = (key: string) => `models.${model}.${key}`;
  const byDefault = `the default for ${family.name}; set models.${model}.`;
  const assets = entry?.assets ?? family.assets;
  const caps: ModelCapabilities = {
    frames: entry?.frames ?? family.frames,
    mixFramesAndReferences: entry?.mix_frames_and_references ?? family.mix,
    returnsLastFrame: entry?.returns_last_frame ?? family.returns,
    source: {
      assets: entry?.assets ? set('assets') : `${byDefault}assets to change it`,
      frames: entry?.frames ? set('frames') : `${byDefault}frames to change it`,
      mix:
        entry?.mix_frames_and_references !== undefined
          ? set('mix_frames_and_references')
          : `${byDefault}mix_frames_and_references to change it`,
      returns: entry?.returns_last_frame !== undefined ? set('returns_last_frame') : `${byDefault}returns_last_frame to change it`,
    },
  };
  if (assets) caps.assets = assets;
  return caps;
}
