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
