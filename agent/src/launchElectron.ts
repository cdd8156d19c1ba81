/** Starts the Electron shell (filled in by the shell's commit). */
export async function launchElectron(): Promise<number> {
  process.stderr.write('The Electron shell is not built yet; use --headless --policy FILE\n');
  return 1;
}
