// reelflow's own small records beside the outputs (under `.reelflow/`): prompt rewrites, picks,
// films, prices, the output's owner (records/*.ts).

export interface RecordStore {
  /**
   * Writes one of reelflow's own small records beside the outputs (under `.reelflow/`, never listed
   * as an output; e.g. the prompt rewrites, docs/enhance.md): whole and atomically, the last write
   * of a name wins. `name` is relative, `/`-separated.
   */
  putRecord(name: string, text: string): Promise<void>;
  /** The record's text; undefined when there is none. A record larger than `maxBytes` is refused. */
  getRecord(name: string, maxBytes: number): Promise<string | undefined>;
  /** The names (as putRecord took them) of the records in the folder `folder` (`/`-separated), in name order; none when it is absent. */
  listRecords(folder: string): Promise<string[]>;
}
