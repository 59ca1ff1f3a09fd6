// The name a user most likely meant: the nearest of the known names by edit distance, if it is
// near enough to be a typo (a misspelt failure code, a contract or config key).

/** The name among `names` nearest to `name` (at most max(2, length/5) one-letter edits away, case aside), or undefined. */
export function nearestName(given: string, names: Iterable<string>): string | undefined {
  const name = given.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const original of names) {
    const candidate = original.toLowerCase();
    // Edit distance, one row at a time.
    let row = Array.from({ length: candidate.length + 1 }, (_, j) => j);
    for (let i = 1; i <= name.length; i++) {
      const next = [i];
      for (let j = 1; j <= candidate.length; j++)
        next[j] = Math.min(
          (row[j] as number) + 1,
          (next[j - 1] as number) + 1,
          (row[j - 1] as number) + (name[i - 1] === candidate[j - 1] ? 0 : 1),
        );
      row = next;
    }
    const distance = row[candidate.length] as number;
    if (best === undefined || distance < best.distance) best = { name: original, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(name.length / 5)) ? best.name : undefined;
}
