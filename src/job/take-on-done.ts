/**
 * @module job/take-on-done
 * The harness's advertisement that its job-done route also hands out jobs: a response
 * header on its job-take answers (and on job-done answers that handed jobs out). A
 * worker that sees it may add `&take=N&job_in_progress=0|1` to a result post, where it
 * would otherwise send a job-take right after it; the answer then carries, beside the
 * acknowledgement, `"jobs": [...]` (the jobs a job-take-batch would have answered at
 * once, none when none are queued: the take does not wait). Jobs handed out that way
 * are taken jobs like any other. A worker that does not see it (the real platform,
 * whose job-done takes no such parameter) posts its results and takes its jobs apart,
 * every request as before.
 */
export const TAKE_ON_DONE_HEADER = 'x-sw-take-on-done';
/** The header's value. */
export const TAKE_ON_DONE_VALUE = '1';
