import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../test/support/tools';
import { AgentFailure, SpentTickets, spentTicketsFile } from '../src/core';

let work: { dir: string; remove(): void };
let file: string;
const NOW = Date.parse('2026-05-01T08:00:00Z');

beforeEach(() => {
  work = tempDir('esign-spent-');
  file = spentTicketsFile(path.join(work.dir, 'ESign Agent', 'settings.json'));
});
afterEach(() => work.remove());

describe('spent ticket nonces on disk', () => {
  it('lives beside the settings file', () => {
    expect(file).toBe(path.join(work.dir, 'ESign Agent', 'spent-tickets.json'));
    expect(spentTicketsFile('C:\\Users\\a\\AppData\\Roaming\\ESign Agent\\settings.json')).toBe(
      'C:\\Users\\a\\AppData\\Roaming\\ESign Agent\\spent-tickets.json',
    );
  });

  it('writes spends at once (mode 600), reloads them, drops expired ones, and forgets given-back ones', async () => {
    const spent = await SpentTickets.load(file, NOW);
    await spent.spend('https://s.example old', NOW + 1000, NOW);
    await spent.spend('https://s.example kept', NOW + 3_600_000, NOW);
    await spent.spend('https://s.example returned', NOW + 3_600_000, NOW);
    spent.giveBack('https://s.example returned');
    await spent.spend('https://s.example other', NOW + 3_600_000, NOW);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['spent-tickets.json']);

    const later = await SpentTickets.load(file, NOW + 60_000);
    expect(later.has('https://s.example kept')).toBe(true);
    expect(later.has('https://s.example other')).toBe(true);
    expect(later.has('https://s.example old')).toBe(false);
    expect(later.has('https://s.example returned')).toBe(false);
  });

  it('starts afresh from a file that is not its own, saying so, and replaces it', async () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"spent": "everything"}');
    const logged: string[] = [];
    const spent = await SpentTickets.load(file, NOW, (line) => logged.push(line));
    expect(logged).toEqual([`spent tickets: ${file} is not a spent-ticket file; starting afresh`]);
    await spent.spend('https://s.example n', NOW + 1000, NOW);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      spent: { 'https://s.example n': NOW + 1000 },
    });
  });

  it('refuses a spend it cannot record (INTERNAL), and keeps no trace of it', async () => {
    // A file where its folder should be: nothing can be written there.
    fs.writeFileSync(path.join(work.dir, 'ESign Agent'), 'not a folder');
    const spent = await SpentTickets.load(file, NOW);
    const refused = await spent.spend('https://s.example n', NOW + 1000, NOW).catch((e) => e);
    expect(refused).toBeInstanceOf(AgentFailure);
    expect(refused).toMatchObject({ code: 'INTERNAL' });
    expect((refused as Error).message).toContain(
      `cannot record the spent signing ticket in ${file}`,
    );
    expect(spent.has('https://s.example n')).toBe(false);
  });
});
