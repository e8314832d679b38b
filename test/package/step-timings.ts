/**
 * The time of each step of a long install-and-run test, printed at its end (what took the
 * minutes on a loaded machine): `timed(what, work)` runs `work` and records its time, also
 * when it throws; `timings` holds the lines, in order.
 */
export interface StepTimings {
  readonly timings: string[];
  timed<T>(what: string, work: () => Promise<T>): Promise<T>;
}

export function stepTimings(): StepTimings {
  const timings: string[] = [];
  return {
    timings,
    async timed(what, work) {
      const started = performance.now();
      try {
        return await work();
      } finally {
        timings.push(`${what}: ${Math.round(performance.now() - started)} ms`);
      }
    },
  };
}
