import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AgentFailure } from './errors';
import { writePrivateFile } from './settings';

const fileSchema = z.object({
  version: z.literal(1),
  /** `<server> <nonce>` → when the entry may be forgotten (ms since the epoch). */
  spent: z.record(z.string().min(1).max(2000), z.number().int().nonnegative()),
});

/**
 * The signing-ticket nonces spent (or held by a signature under way) on this computer. With a
 * file, they outlive the agent: a restart does not make a used ticket good again. An entry is
 * kept until its ticket has expired (plus the clock tolerance), when the ticket is refused
 * anyway, so the file stays small.
 */
export class SpentTickets {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    /** Null: this run's memory only. */
    private readonly file: string | null,
    private readonly entries: Map<string, number>,
    private readonly log: (message: string) => void,
  ) {}

  static inMemory(): SpentTickets {
    return new SpentTickets(null, new Map(), () => undefined);
  }

  /**
   * The nonces recorded in `file` that are still worth keeping; none when it does not exist. A
   * file that cannot be read as ours is logged and replaced at the next write: refusing to start
   * would lock the user out of signing for a cache.
   */
  static async load(
    file: string,
    now: number,
    log: (message: string) => void = () => undefined,
  ): Promise<SpentTickets> {
    const entries = new Map<string, number>();
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        log(`spent tickets: cannot read ${file}: ${String(error)}`);
      }
    }
    if (text !== undefined) {
      let parsed: z.infer<typeof fileSchema> | undefined;
      try {
        parsed = fileSchema.parse(JSON.parse(text));
      } catch {
        log(`spent tickets: ${file} is not a spent-ticket file; starting afresh`);
      }
      for (const [key, until] of Object.entries(parsed?.spent ?? {})) {
        if (until >= now) entries.set(key, until);
      }
    }
    return new SpentTickets(file, entries, log);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Records a nonce as spent until `until` (ms), saved before this resolves. The entry is taken
   * at once (a second request for the same nonce meanwhile sees it); when it cannot be saved it
   * is given back and INTERNAL thrown: a spend that would not survive a restart is refused.
   */
  async spend(key: string, until: number, now: number): Promise<void> {
    for (const [entry, expiry] of this.entries) {
      if (expiry < now) this.entries.delete(entry);
    }
    this.entries.set(key, until);
    try {
      await this.save();
    } catch (error) {
      this.entries.delete(key);
      throw new AgentFailure(
        'INTERNAL',
        `cannot record the spent signing ticket in ${this.file}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Forgets a nonce whose signature did not happen; a failed save only keeps it refused. */
  giveBack(key: string): void {
    this.entries.delete(key);
    this.save().catch((error: unknown) =>
      this.log(`spent tickets: cannot save ${this.file}: ${String(error)}`),
    );
  }

  /** Writes the file whole, readable by the user only, one write at a time. */
  private save(): Promise<void> {
    const file = this.file;
    if (file === null) return Promise.resolve();
    // Each write takes the entries as they are when it runs, so the last one has them all.
    const write = () =>
      writePrivateFile(
        file,
        `${JSON.stringify({ version: 1, spent: Object.fromEntries(this.entries) })}\n`,
      );
    this.writing = this.writing.catch(() => undefined).then(write);
    return this.writing;
  }
}
