import fs from 'node:fs';
import type { Module, Slot } from 'graphene-pk11';
import { AgentFailure } from '../errors';
import { ckr, pkcs11Code } from './returnValues';
import { SerialQueue } from './serialQueue';
import { drainSlotEvents, type SlotEventMode, SlotEventWatch } from './slotEvents';

export type Graphene = typeof import('graphene-pk11');

/** A module the settings enable: its label (shown to people) and its file. */
export interface ModuleSource {
  label: string;
  path: string;
}

/** A token present now. Slot ids change between plug-ins: serial number + label identify it. */
export interface PresentToken {
  /** The label of the module that drives it. */
  module: string;
  label: string;
  serialNumber: string;
  manufacturer: string;
  model: string;
  /** CK_TOKEN_INFO.flags when it was last read. */
  flags: number;
}

export type ModuleState =
  | { label: string; path: string; state: 'absent' }
  | { label: string; path: string; state: 'loaded'; sameFileAs?: string }
  | { label: string; path: string; state: 'failed'; reason: string };

export interface TokenRegistryOptions {
  /** The enabled modules, read again at each poll (the settings page may change them). */
  modules(): readonly ModuleSource[];
  pollIntervalMs: number;
  /**
   * How often modules that may report slot events are asked, without blocking (default 250 ms):
   * a token plugged into such a module is noticed within a tick instead of a poll.
   */
  slotEventTickMs?: number;
  /** Re-initialize idle modules every this many polls (many see new tokens only then). */
  reinitializeEvery?: number;
  log?(message: string): void;
}

const TOKEN_INITIALIZED = 0x400;
const SLOT_EVENT_TICK_MS = 250;

class LoadedModule {
  readonly queue = new SerialQueue();
  readonly slotEvents = new SlotEventWatch();
  tokens: PresentToken[] = [];

  constructor(
    readonly source: ModuleSource,
    readonly file: string,
    readonly module: Module,
    /** False when someone else in this process initialized it: then we never finalize it. */
    readonly ownsInitialization: boolean,
  ) {}
}

/** The same token through two modules (a vendor's and OpenSC) counts once. */
function tokenKey(token: { serialNumber: string; label: string }): string {
  return `${token.serialNumber}\u0000${token.label}`;
}

/** CK_TOKEN_INFO strings are blank-padded (some modules pad with NUL). */
function trimmed(value: string): string {
  let end = value.length;
  while (end > 0 && (value[end - 1] === ' ' || value.charCodeAt(end - 1) === 0)) end--;
  return value.slice(0, end);
}

/**
 * Every PKCS#11 module of the settings, loaded when its file exists (absent ones are skipped
 * and looked for again at each poll: middleware installed while the agent runs is found), and
 * the tokens they see. One queue per module serializes every call to it. Polls notice tokens
 * plugged in or removed and tell the listeners.
 */
export class TokenRegistry {
  private graphene: Graphene | undefined;
  private readonly loaded = new Map<string, LoadedModule>();
  /** Files that failed to load, with the mtime of the failed attempt (retried when it changes). */
  private readonly failures = new Map<string, { mtimeMs: number; reason: string }>();
  private readonly listeners = new Set<(tokens: PresentToken[]) => void>();
  private present: PresentToken[] = [];
  private timer: NodeJS.Timeout | undefined;
  private eventTimer: NodeJS.Timeout | undefined;
  private polling: Promise<PresentToken[]> | undefined;
  private ticking: Promise<void> | undefined;
  private polls = 0;
  private closed = false;

  constructor(private readonly options: TokenRegistryOptions) {}

  /** Starts polling; the first poll runs now. */
  start(): Promise<PresentToken[]> {
    const first = this.refresh();
    this.timer = setInterval(() => {
      void this.refresh().catch((error: unknown) =>
        this.log(`token poll failed: ${String(error)}`),
      );
    }, this.options.pollIntervalMs);
    this.timer.unref();
    // Slot events by a non-blocking ask per tick: a blocking C_WaitForSlotEvent would freeze the
    // event loop (pkcs11js calls are synchronous), and in a worker thread it would call into a
    // module initialized for one thread (C_Initialize without locking arguments).
    this.eventTimer = setInterval(() => {
      void this.tick().catch((error: unknown) =>
        this.log(`slot event tick failed: ${String(error)}`),
      );
    }, this.options.slotEventTickMs ?? SLOT_EVENT_TICK_MS);
    this.eventTimer.unref();
    return first;
  }

  /** How each loaded module reports tokens coming and going, by module label. */
  slotEventModes(): Record<string, SlotEventMode> {
    return Object.fromEntries(
      [...this.loaded.values()].map((entry) => [entry.source.label, entry.slotEvents.mode]),
    );
  }

  /** The tokens seen by the last poll. */
  tokens(): PresentToken[] {
    return [...this.present];
  }

  onChange(listener: (tokens: PresentToken[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Loads modules whose file appeared, reads every slot list, tells listeners of changes. */
  refresh(): Promise<PresentToken[]> {
    this.polling ??= this.poll().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  /** What became of each module of the settings (for the settings page and for support). */
  moduleStates(): ModuleState[] {
    const byFile = new Map<string, string>();
    return this.options.modules().map(({ label, path }) => {
      const file = realFile(path);
      if (file === undefined) return { label, path, state: 'absent' };
      const failure = this.failures.get(file);
      if (failure) return { label, path, state: 'failed', reason: failure.reason };
      if (!this.loaded.has(file)) return { label, path, state: 'absent' };
      const first = byFile.get(file);
      byFile.set(file, first ?? label);
      return first === undefined
        ? { label, path, state: 'loaded' }
        : { label, path, state: 'loaded', sameFileAs: first };
    });
  }

  /**
   * Runs `work` on the slot holding the token (serial number + label), looked up afresh, inside
   * that module's queue: nothing else touches the module until `work` ends. Undefined when no
   * module sees the token now (it was pulled out).
   */
  async ifPresent<T>(
    wanted: { serialNumber: string; label: string },
    work: (slot: Slot, graphene: Graphene, token: PresentToken) => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    await this.loadNewModules();
    for (const entry of this.loaded.values()) {
      const found = await entry.queue.run(async () => {
        const slot = this.findSlot(entry, wanted);
        return slot ? { value: await work(slot.slot, this.graphene!, slot.token) } : undefined;
      });
      if (found) return found;
    }
    return undefined;
  }

  /** As `ifPresent`, for a token the request needs: TOKEN_REMOVED when it is not there. */
  async withToken<T>(
    wanted: { serialNumber: string; label: string },
    work: (slot: Slot, graphene: Graphene, token: PresentToken) => Promise<T>,
  ): Promise<T> {
    const ran = await this.ifPresent(wanted, work);
    if (ran) return ran.value;
    throw new AgentFailure(
      'TOKEN_REMOVED',
      `token "${wanted.label}" (serial ${wanted.serialNumber}) is not plugged in`,
    );
  }

  /** Is this token still in its slot? (After a failure: tells removal from other errors.) */
  stillPresent(slot: Slot, wanted: { serialNumber: string; label: string }): boolean {
    try {
      const token = slot.getToken();
      return tokenKey(readToken(token, '')) === tokenKey(wanted);
    } catch {
      return false;
    }
  }

  /** Stops polling and finalizes the modules this registry initialized. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.eventTimer) clearInterval(this.eventTimer);
    await this.polling?.catch(() => undefined);
    await this.ticking?.catch(() => undefined);
    for (const entry of this.loaded.values()) {
      await entry.queue.run(() => {
        if (!entry.ownsInitialization) return;
        try {
          entry.module.finalize();
        } catch {
          // Already finalized: nothing left to release.
        }
      });
    }
    this.loaded.clear();
  }

  private log(message: string): void {
    this.options.log?.(message);
  }

  private async poll(): Promise<PresentToken[]> {
    if (this.closed) return this.present;
    await this.ticking?.catch(() => undefined);
    this.polls++;
    await this.loadNewModules();
    for (const entry of this.loaded.values()) {
      // A module busy with a signature keeps its last list: the poll never waits for a user.
      if (!entry.queue.idle) continue;
      const { scan, reinitialize } = entry.slotEvents.atPoll(
        this.polls,
        this.options.reinitializeEvery ?? 4,
      );
      if (!scan) continue;
      entry.tokens = await entry.queue.run(() => {
        if (reinitialize && entry.ownsInitialization) this.reinitialize(entry);
        return this.scan(entry);
      });
    }
    return this.publish();
  }

  /**
   * Asks each module that may report slot events whether any happened, without blocking, and
   * reads the slot list of those that say so. Skipped while a poll runs (it reads them all).
   */
  private tick(): Promise<void> {
    if (this.closed || this.polling || this.ticking) return Promise.resolve();
    this.ticking = this.askSlotEvents().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async askSlotEvents(): Promise<void> {
    let changed = false;
    for (const entry of this.loaded.values()) {
      if (!entry.slotEvents.asksEvents || !entry.queue.idle) continue;
      await entry.queue.run(() => {
        const answer = drainSlotEvents(entry.module.lib);
        const before = entry.slotEvents.mode;
        const scan = entry.slotEvents.afterTick(answer);
        if (entry.slotEvents.mode !== before) {
          this.log(`${entry.source.label}: slot events ${entry.slotEvents.mode} (${answer})`);
        }
        if (scan) {
          entry.tokens = this.scan(entry);
          changed = true;
        }
      });
    }
    if (changed) this.publish();
  }

  /** Merges the modules' lists into `present` and tells listeners when it changed. */
  private publish(): PresentToken[] {
    const seen = new Set<string>();
    const tokens: PresentToken[] = [];
    for (const entry of this.loaded.values()) {
      for (const token of entry.tokens) {
        if (seen.has(tokenKey(token))) continue;
        seen.add(tokenKey(token));
        tokens.push(token);
      }
    }
    const before = this.present.map((token) => `${token.module}\u0000${tokenKey(token)}`);
    const after = tokens.map((token) => `${token.module}\u0000${tokenKey(token)}`);
    this.present = tokens;
    if (before.sort().join('\n') !== after.sort().join('\n')) {
      for (const listener of this.listeners) listener(this.tokens());
    }
    return this.tokens();
  }

  private reinitialize(entry: LoadedModule): void {
    try {
      entry.module.finalize();
      entry.module.lib.C_Initialize();
    } catch (error) {
      if (pkcs11Code(error) !== ckr.CRYPTOKI_ALREADY_INITIALIZED) {
        this.log(`${entry.source.label}: re-initialization failed: ${String(error)}`);
      }
    }
  }

  /** The initialized tokens the module sees; a slot whose token vanished is skipped. */
  private scan(entry: LoadedModule): PresentToken[] {
    const tokens: PresentToken[] = [];
    let slots: ReturnType<Module['getSlots']>;
    try {
      slots = entry.module.getSlots(true);
    } catch (error) {
      this.log(`${entry.source.label}: C_GetSlotList failed: ${String(error)}`);
      return [];
    }
    for (let index = 0; index < slots.length; index++) {
      try {
        const token = slots.items(index).getToken();
        if ((token.flags & TOKEN_INITIALIZED) === 0) continue;
        tokens.push(readToken(token, entry.source.label));
      } catch {
        // Removed between C_GetSlotList and C_GetTokenInfo.
      }
    }
    return tokens;
  }

  private findSlot(
    entry: LoadedModule,
    wanted: { serialNumber: string; label: string },
  ): { slot: Slot; token: PresentToken } | undefined {
    const slots = entry.module.getSlots(true);
    for (let index = 0; index < slots.length; index++) {
      const slot = slots.items(index);
      try {
        const token = readToken(slot.getToken(), entry.source.label);
        if (tokenKey(token) === tokenKey(wanted)) return { slot, token };
      } catch {
        // Removed meanwhile.
      }
    }
    return undefined;
  }

  private async loadNewModules(): Promise<void> {
    this.graphene ??= await import('graphene-pk11');
    for (const source of this.options.modules()) {
      const file = realFile(source.path);
      if (file === undefined || this.loaded.has(file)) continue;
      const mtimeMs = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const failure = this.failures.get(file);
      if (failure && failure.mtimeMs === mtimeMs) continue;
      try {
        const module = this.graphene.Module.load(file, source.label);
        let owns = true;
        try {
          // pkcs11js directly: graphene's initialize() hides CKR_CRYPTOKI_ALREADY_INITIALIZED.
          module.lib.C_Initialize();
        } catch (error) {
          // Another library in this process initialized it: use it, never finalize it.
          if (pkcs11Code(error) !== ckr.CRYPTOKI_ALREADY_INITIALIZED) throw error;
          owns = false;
        }
        this.loaded.set(file, new LoadedModule(source, file, module, owns));
        this.failures.delete(file);
        this.log(`${source.label}: loaded ${file}`);
      } catch (error) {
        // A wrong architecture or a broken install: reported on the settings page, not fatal.
        const reason = error instanceof Error ? error.message : String(error);
        this.failures.set(file, { mtimeMs, reason });
        this.log(`${source.label}: cannot load ${file}: ${reason}`);
      }
    }
  }
}

function readToken(
  token: {
    label: string;
    serialNumber: string;
    manufacturerID: string;
    model: string;
    flags: number;
  },
  module: string,
): PresentToken {
  return {
    module,
    label: trimmed(token.label),
    serialNumber: trimmed(token.serialNumber),
    manufacturer: trimmed(token.manufacturerID),
    model: trimmed(token.model),
    flags: token.flags,
  };
}

/** The file behind a path (links resolved: Debian links one SoftHSM path to the other). */
function realFile(modulePath: string): string | undefined {
  try {
    return fs.realpathSync(modulePath);
  } catch {
    return undefined;
  }
}
