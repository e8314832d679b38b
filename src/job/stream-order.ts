/**
 * @module job/stream-order
 * The harness's advertisement that it stores a job's stream chunks in the order of
 * their `metrics.stream_index`, whatever order their posts arrive in: a response header
 * on its job-take and job-take-batch answers. A worker that sees it may keep several
 * chunk posts in flight (its chunk window); one that does not (the real platform, whose
 * ordering of concurrent posts is not documented) posts one chunk at a time.
 */
export const STREAM_ORDER_HEADER = 'x-sw-stream-order';
/** The header's value: chunks are ordered by this metric. */
export const STREAM_ORDER_VALUE = 'stream_index';

/**
 * The harness's advertisement that its job-stream route also takes several chunks in
 * one post: a JSON array of `{output, metrics}` items, each still its own chunk, with
 * consecutive `metrics.stream_index` values. Its value is a count, `n`: a post carries
 * at most `n` chunks, and the harness holds a chunk that came early at most `n` past the
 * next one it expects, so a worker keeps at most `n` chunks in flight over all its posts.
 * A worker that does not see it (the real platform: its job-stream route takes one
 * `{output}` per post) posts one chunk a post, as before.
 */
export const STREAM_BATCH_HEADER = 'x-sw-stream-batch';

/** The advertised count of STREAM_BATCH_HEADER, or 0 when absent or not a whole number from 2. */
export function readStreamBatch(value: string | undefined): number {
  if (value === undefined || !/^\s*\d{1,6}\s*$/.test(value)) return 0;
  const count = Number(value);
  return count >= 2 ? count : 0;
}
