/**
 * Reading the Prometheus text format in tests: the value of one sample, found by its name and
 * the labels given (others may be present), or undefined when the series does not exist.
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const line = text
    .split('\n')
    .find(
      (row) =>
        (row.startsWith(`${name}{`) || row.startsWith(`${name} `)) &&
        Object.entries(labels).every(([key, value]) => row.includes(`${key}="${value}"`)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
