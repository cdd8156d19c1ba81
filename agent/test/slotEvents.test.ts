/**
 * Slot events "where supported, polling otherwise". SoftHSM2 is the real module here: it answers
 * a non-blocking C_WaitForSlotEvent with CKR_NO_EVENT and never reports an event (new tokens
 * appear only at C_Initialize), so it must stay polled, and a token created while the registry
 * runs must still be noticed. No module here reports events (no PC/SC reader), so the event
 * path is covered by the decision logic alone.
 */
import path from 'node:path';
import { softHsmModule, tempDir } from '../../test/support/tools';
import { SlotEventWatch } from '../src/core/pkcs11/slotEvents';
import { AgentChild, SoftHsmLab } from './support/testTokens';

describe('slot events with SoftHSM2 (no events: the polling fallback)', () => {
  it('answers quiet to a non-blocking wait, stays unproven, and still notices a new token by polling', async () => {
    const work = tempDir('esign-slot-events-');
    const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
    lab.addToken({ label: 'First', pin: '1234', soPin: '5678' });
    const registry = new AgentChild(
      lab.config,
      { module: softHsmModule, pollIntervalMs: 100, slotEventTickMs: 20 },
      'registryProcess.ts',
    );
    try {
      const ready = await registry.next((event) => event.event === 'ready');
      expect(ready).toMatchObject({
        probe: 'quiet',
        tokens: ['First'],
        modes: { SoftHSM2: 'unproven' },
      });
      lab.addToken({ label: 'Second', pin: '1234', soPin: '5678' });
      const changed = await registry.next(
        (event) => event.event === 'changed' && (event.tokens as string[]).includes('Second'),
      );
      // Many ticks have passed by now, all quiet: SoftHSM is polled, never trusted for events.
      expect(changed.modes).toEqual({ SoftHSM2: 'unproven' });
    } finally {
      await registry.stop();
      work.remove();
    }
  });
});

describe('SlotEventWatch: when a module is trusted for events', () => {
  it('polls and re-initializes a module until it has reported an event', () => {
    const watch = new SlotEventWatch();
    expect(watch.afterTick('quiet')).toBe(false);
    expect(watch.mode).toBe('unproven');
    expect(watch.asksEvents).toBe(true);
    expect(watch.atPoll(1, 4)).toEqual({ scan: true, reinitialize: false });
    expect(watch.atPoll(4, 4)).toEqual({ scan: true, reinitialize: true });
  });

  it('reads the slot list at an event, then only at events and every 8th poll, never re-initializing', () => {
    const watch = new SlotEventWatch();
    expect(watch.afterTick('event')).toBe(true);
    expect(watch.mode).toBe('events');
    expect(watch.afterTick('quiet')).toBe(false);
    expect(watch.atPoll(4, 4)).toEqual({ scan: false, reinitialize: false });
    expect(watch.atPoll(8, 4)).toEqual({ scan: true, reinitialize: false });
  });

  it('stops asking a module that does not support events, and polls one whose events are unreliable', () => {
    const unsupported = new SlotEventWatch();
    expect(unsupported.afterTick('unsupported')).toBe(false);
    expect(unsupported.mode).toBe('polling');
    expect(unsupported.asksEvents).toBe(false);
    expect(unsupported.atPoll(4, 4)).toEqual({ scan: true, reinitialize: true });

    const flooding = new SlotEventWatch();
    flooding.afterTick('event');
    // Whatever the endless events hid is read once, then the module is polled.
    expect(flooding.afterTick('unreliable')).toBe(true);
    expect(flooding.mode).toBe('polling');
    expect(flooding.atPoll(3, 4)).toEqual({ scan: true, reinitialize: false });
  });
});

describe('a module another library in the process initialized', () => {
  it('is used as it is (CKR_CRYPTOKI_ALREADY_INITIALIZED) and never finalized by the agent', async () => {
    const work = tempDir('esign-shared-module-');
    const lab = new SoftHsmLab(path.join(work.dir, 'softhsm'));
    lab.addToken({ label: 'Shared', pin: '1234', soPin: '5678' });
    const registry = new AgentChild(
      lab.config,
      {
        module: softHsmModule,
        pollIntervalMs: 100,
        slotEventTickMs: 20,
        initializedByAnother: true,
      },
      'registryProcess.ts',
    );
    try {
      expect(await registry.next((event) => event.event === 'ready')).toMatchObject({
        tokens: ['Shared'],
      });
      // Several polls (re-initializations of idle modules included) pass: none may finalize it.
      await new Promise((resolve) => setTimeout(resolve, 600));
      await registry.stop();
      expect(registry.events.find((event) => event.event === 'closed')).toEqual({
        event: 'closed',
        anotherStillWorks: true,
      });
    } finally {
      await registry.stop();
      work.remove();
    }
  });
});
