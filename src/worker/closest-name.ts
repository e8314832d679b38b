/**
 * @module worker/closest-name
 * "Did you mean ...?" for misspelt flags and options: the known name nearest to an
 * unknown one by edit distance (insertions, deletions, substitutions and swaps of two
 * neighbours), when it is near enough to be a plausible typo.
 */

/** Edit distance between `a` and `b` (optimal string alignment: a swap of two neighbours costs 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** Compare names without case, `-` or `_`: `returnAggregateStream` vs `aggregate_stream`. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/**
 * The known name closest to `unknown`, or undefined when none is within
 * `max(2, a third of its length)` edits, or when it only shares a long common part
 * (one name contains the other: `returnAggregateStream` -> `aggregateStream`).
 */
export function closestName(unknown: string, known: Iterable<string>): string | undefined {
  const target = normalize(unknown);
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = normalize(name);
    let distance = editDistance(target, candidate);
    const contained = candidate.length >= 4 && (target.includes(candidate) || candidate.includes(target));
    if (contained) distance = Math.min(distance, 1);
    const limit = Math.max(2, Math.floor(candidate.length / 3));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** `"; did you mean --test-input?"`, or an empty string when nothing is close. */
export function didYouMean(unknown: string, known: Iterable<string>, prefix = ''): string {
  const name = closestName(unknown, known);
  return name === undefined ? '' : `; did you mean ${prefix}${name}?`;
}
