// @ts-check
// @module ui/value-view
// A job's large value on the job page: the harness sends a preview with its size
// (value-preview.ts); a value sent whole is shown whole, a larger one as its beginning,
// with buttons to load the rest into the page (up to LOAD_LIMIT) or download it. A
// load that fails shows the API's error and can be tried again: never endless loading.
import { useState } from 'preact/hooks';
import { download, views } from './api.js';
import { ErrorBox, bytes, html, pretty } from './format.js';

/** Values larger than this are downloaded, not drawn into the page (a browser tab slows down on megabytes of text). */
/**
 * @typedef {import('./api-types.js').ValuePreview} ValuePreview
 * @typedef {import('./api-types.js').ShownError} ShownError
 * @typedef {import('./api.js').ValuePart} ValuePart
 */

export const LOAD_LIMIT = 2 * 1024 * 1024;

/** Load or download one of a job's values (`size`: its bytes, when known); `onLoaded(value)` gets it when loaded. */
/** @param {{ endpointId: string, jobId: string, part: ValuePart, size?: number, onLoaded?: (value: any) => void, what?: string }} props */
export function ValueActions({ endpointId, jobId, part, size, onLoaded, what = part }) {
  const sized = size === undefined ? '' : ` (${bytes(size)})`;
  const loadable = onLoaded && (size === undefined || size <= LOAD_LIMIT);
  const [state, setState] = useState(
    /** @type {{ busy: 'load' | 'download' | undefined, error: ShownError | undefined }} */ ({ busy: undefined, error: undefined }),
  );
  /** @param {'load' | 'download'} busy @param {() => Promise<void>} action */
  const run = async (busy, action) => {
    setState({ busy, error: undefined });
    try {
      await action();
      setState({ busy: undefined, error: undefined });
    } catch (error) {
      setState({ busy: undefined, error: /** @type {ShownError} */ (error) });
    }
  };
  const path = views.valuePath(endpointId, jobId, part);
  return html`<div class="row value-actions" data-test=${`actions-${part}`}>
    ${
      loadable
        ? html`<button type="button" class="small" disabled=${state.busy !== undefined} data-test=${`load-${part}`}
          onClick=${() => run('load', async () => onLoaded?.(await views.value(endpointId, jobId, part)))}>Show all of the ${what}${sized}</button>`
        : null
    }
    <button type="button" class="small" disabled=${state.busy !== undefined} data-test=${`download-${part}`}
      onClick=${() => run('download', () => download(`${path}?download=1`, `${jobId}-${part}.json`))}>Download the ${what}${sized}</button>
    ${state.busy ? html`<span class="hint" role="status" data-test=${`busy-${part}`}>${state.busy === 'load' ? 'Loading' : 'Downloading'}${sized}…</span>` : null}
    ${onLoaded && !loadable ? html`<span class="hint">over ${bytes(LOAD_LIMIT)}: too large to show here, download it</span>` : null}
    <${ErrorBox} error=${state.error} />
  </div>`;
}

/**
 * `preview`: { complete, bytes, value | preview }. `test`: the data-test of the whole
 * value's <pre> (the preview's is `${test}-preview`).
 */
/** @param {{ endpointId: string, jobId: string, part: ValuePart, preview: ValuePreview | undefined, test: string }} props */
export function Value({ endpointId, jobId, part, preview, test }) {
  const [loaded, setLoaded] = useState(/** @type {{ value: unknown } | undefined} */ (undefined));
  if (!preview) return null;
  if (preview.complete || loaded) {
    const value = preview.complete ? preview.value : loaded?.value;
    return html`<pre data-test=${test}>${pretty(value)}</pre>
      ${preview.bytes > 64 * 1024 ? html`<${ValueActions} endpointId=${endpointId} jobId=${jobId} part=${part} size=${preview.bytes} />` : null}`;
  }
  return html`<p class="hint" data-test=${`${test}-size`}>${bytes(preview.bytes)} in all; the first ${bytes(preview.preview.length)} shown.</p>
    <pre class="preview" data-test=${`${test}-preview`}>${preview.preview}…</pre>
    <${ValueActions} endpointId=${endpointId} jobId=${jobId} part=${part} size=${preview.bytes} onLoaded=${(/** @type {unknown} */ value) => setLoaded({ value })} />`;
}
