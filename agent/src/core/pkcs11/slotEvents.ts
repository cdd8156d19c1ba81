import { ckr, pkcs11Code } from './returnValues';

/** CKF_DONT_BLOCK: C_WaitForSlotEvent answers at once (CKR_NO_EVENT when nothing happened). */
const DONT_BLOCK = 1;
/** More events than this in one tick: the module repeats itself, so its events mean nothing. */
const MAX_EVENTS_PER_TICK = 16;
/** A module trusted for events still has its slot list read every this many polls. */
const SAFETY_SCAN_EVERY = 8;

/** What one non-blocking C_WaitForSlotEvent round said, its pending events drained. */
export type SlotEventAnswer =
  | 'event'
  | 'quiet'
  /** CKR_FUNCTION_NOT_SUPPORTED. */
  | 'unsupported'
  /** Some other error, or an endless stream of events. */
  | 'unreliable';

/**
 * How the registry hears of tokens coming and going through one module:
 * - `unproven`: polled like a module without events, and asked for events at each tick. SoftHSM
 *   2.6 answers CKR_NO_EVENT to a non-blocking wait yet never reports one (tokens appear only
 *   at C_Initialize), so a quiet answer proves nothing.
 * - `events`: the module has reported an event, so it reports them: its slot list is read when
 *   it says something changed (and, as a safety net, every few polls), never re-initialized.
 * - `polling`: it cannot report events; polled, and re-initialized now and then.
 */
export type SlotEventMode = 'unproven' | 'events' | 'polling';

/** Drains the module's pending slot events without blocking (pkcs11js calls are synchronous). */
export function drainSlotEvents(lib: {
  C_WaitForSlotEvent(flags: number): Buffer | null;
}): SlotEventAnswer {
  let events = 0;
  try {
    while (lib.C_WaitForSlotEvent(DONT_BLOCK) !== null) {
      if (++events > MAX_EVENTS_PER_TICK) return 'unreliable';
    }
  } catch (error) {
    return pkcs11Code(error) === ckr.FUNCTION_NOT_SUPPORTED ? 'unsupported' : 'unreliable';
  }
  return events > 0 ? 'event' : 'quiet';
}

/** One module's slot-event state: decides when its slot list is read and when it is reset. */
export class SlotEventWatch {
  private current: SlotEventMode = 'unproven';

  get mode(): SlotEventMode {
    return this.current;
  }

  /** Is the module still asked for events at each tick? */
  get asksEvents(): boolean {
    return this.current !== 'polling';
  }

  /** After a tick's answer: read the slot list now? */
  afterTick(answer: SlotEventAnswer): boolean {
    switch (answer) {
      case 'event':
        this.current = 'events';
        return true;
      case 'quiet':
        return false;
      case 'unsupported':
        this.current = 'polling';
        return false;
      case 'unreliable':
        // Whatever was missed is read now; from here on the module is polled.
        this.current = 'polling';
        return true;
    }
  }

  /** At the `poll`th full poll: read the slot list? finalize and initialize the module first? */
  atPoll(poll: number, reinitializeEvery: number): { scan: boolean; reinitialize: boolean } {
    if (this.current === 'events')
      return { scan: poll % SAFETY_SCAN_EVERY === 0, reinitialize: false };
    return { scan: true, reinitialize: poll > 1 && poll % reinitializeEvery === 0 };
  }
}
