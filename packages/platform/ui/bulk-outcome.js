// @ts-check
// @module ui/bulk-outcome
// What a bulk cancel or retry did, coloured by its outcome (every job changed: success; some
// refused: warning; every one refused: error), the refused jobs grouped by the API's code so
// that 60 refusals for one reason read as one line, not 60.
import { html, jobHref } from './format.js';

/**
 * @typedef {import('./api-types.js').BulkOutcome} BulkOutcome
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {'success' | 'partial' | 'failure'} BulkKind
 * @typedef {{ code: string, message: string, jobs: Array<{ endpointId: string, id: string }> }} RefusedGroup
 */

/** Job ids listed per reason before "and N more". */
const SHOWN_IDS = 5;

/** @param {BulkOutcome} outcome @returns {BulkKind} */
export function bulkKind(outcome) {
  if (outcome.refused.length === 0) return 'success';
  return outcome.done === 0 ? 'failure' : 'partial';
}

/**
 * The refused jobs by code, most frequent first; each group keeps the first job's message
 * (the messages of one code differ only in the job they name).
 * @param {BulkOutcome['refused']} refused @returns {RefusedGroup[]}
 */
export function groupRefused(refused) {
  /** @type {Map<string, RefusedGroup>} */
  const groups = new Map();
  for (const r of refused) {
    const group = groups.get(r.code) ?? { code: r.code, message: r.message, jobs: [] };
    group.jobs.push({ endpointId: r.endpointId, id: r.id });
    groups.set(r.code, group);
  }
  return [...groups.values()].sort((a, b) => b.jobs.length - a.jobs.length);
}

const CLASS = /** @type {Record<BulkKind, string>} */ ({ success: 'notice', partial: 'warning', failure: 'error' });

/** @param {{ outcome: BulkOutcome | undefined, verb: string }} props */
export function BulkOutcomeBox({ outcome, verb }) {
  if (!outcome) return null;
  const kind = bulkKind(outcome);
  const groups = groupRefused(outcome.refused);
  return html`<div class=${`bulk-outcome ${CLASS[kind]}`} role=${kind === 'success' ? 'status' : 'alert'} data-test="bulk-outcome" data-outcome=${kind}>
    <strong>${verb} ${outcome.done} of ${outcome.asked}</strong>${groups.length > 0 ? `; ${outcome.refused.length} refused:` : ''}
    ${
      groups.length > 0
        ? html`<ul class="refused" data-test="refused-groups">${groups.map(
            (g) => html`<li data-test="refused-group"><code>${g.code}</code> × ${g.jobs.length}: ${g.message}
          <span class="muted"> (${g.jobs.slice(0, SHOWN_IDS).map((j, i) => html`${i > 0 ? ', ' : ''}<a href=${jobHref(j.endpointId, j.id)}>${j.id}</a>`)}${g.jobs.length > SHOWN_IDS ? ` and ${g.jobs.length - SHOWN_IDS} more` : ''})</span></li>`,
          )}</ul>`
        : null
    }
  </div>`;
}

/**
 * How a confirm names the endpoints of some jobs: by name and id ("image-gen (ep-1)"), up to three, then a count.
 * @param {ReadonlyArray<{ endpointId: string }>} refs @param {EndpointNames} names
 */
export function endpointsPhrase(refs, names) {
  const ids = [...new Set(refs.map((r) => r.endpointId))];
  const shown = ids.slice(0, 3).map((id) => endpointLabel(id, names));
  const more = ids.length > 3 ? ` and ${ids.length - 3} more` : '';
  return `on ${ids.length === 1 ? 'endpoint' : 'endpoints'} ${shown.join(', ')}${more}`;
}

/** An endpoint as a confirm names it: `name (id)`, or the id when it has no name. @param {string} id @param {EndpointNames} names */
export function endpointLabel(id, names) {
  const name = names[id];
  return name ? `${name} (${id})` : id;
}
