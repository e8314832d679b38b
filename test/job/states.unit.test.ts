import { describe, expect, it } from 'vitest';
import { JOB_STATUSES, TRANSITIONS, ServerlessWorkerError, lookupTransition, nextState, type JobStatus, type JobTrigger } from '../../src/job/index.js';

const TRIGGERS: JobTrigger[] = ['take', 'complete', 'fail', 'timeout', 'cancel', 'retry', 'requeue'];

describe('job state transitions', () => {
  it('allows exactly the moves of spec section 3.1', () => {
    const allowed = TRANSITIONS.map((t) => `${t.from} --${t.trigger}--> ${t.to}`).sort();
    expect(allowed).toEqual(
      [
        'IN_QUEUE --take--> IN_PROGRESS',
        'IN_QUEUE --cancel--> CANCELLED',
        'IN_PROGRESS --complete--> COMPLETED',
        'IN_PROGRESS --fail--> FAILED',
        'IN_PROGRESS --timeout--> TIMED_OUT',
        'IN_PROGRESS --cancel--> CANCELLED',
        'IN_PROGRESS --requeue--> IN_QUEUE',
        'FAILED --retry--> IN_QUEUE',
        'TIMED_OUT --retry--> IN_QUEUE',
      ].sort(),
    );
  });

  for (const transition of TRANSITIONS) {
    it(`${transition.from} --${transition.trigger}--> ${transition.to}`, () => {
      expect(nextState(transition.from, transition.trigger, 'job-1')).toBe(transition.to);
    });
  }

  const illegal: Array<[JobStatus, JobTrigger]> = [];
  for (const from of JOB_STATUSES) {
    for (const trigger of TRIGGERS) {
      if (lookupTransition(from, trigger) === undefined) illegal.push([from, trigger]);
    }
  }

  it('refuses every other move (45 pairs less the 9 allowed)', () => {
    expect(illegal).toHaveLength(JOB_STATUSES.length * TRIGGERS.length - TRANSITIONS.length);
  });

  for (const [from, trigger] of illegal) {
    it(`refuses ${trigger} from ${from} with SW_ILLEGAL_TRANSITION`, () => {
      let thrown: unknown;
      try {
        nextState(from, trigger, 'job-1');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ServerlessWorkerError);
      const error = thrown as ServerlessWorkerError;
      expect(error.code).toBe('SW_ILLEGAL_TRANSITION');
      expect(error.message).toContain(`cannot ${trigger} from ${from}`);
      expect(error.details).toMatchObject({ jobId: 'job-1', from, trigger });
    });
  }
});
