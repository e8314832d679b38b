// @module ui/api
// The dashboard's calls to the harness: every request carries the API key from
// sessionStorage in the Authorization header (never in a URL). Errors come back as the
// API gives them ({ error: { code, message } }). Live updates: one Server-Sent Events
// stream, read with fetch (EventSource cannot send the header), reconnected on a drop.

const KEY_NAME = 'serverless-worker-api-key';

export const keyStore = {
  get: () => sessionStorage.getItem(KEY_NAME) ?? '',
  set: (key) => sessionStorage.setItem(KEY_NAME, key),
  clear: () => sessionStorage.removeItem(KEY_NAME),
};

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function headers(extra = {}) {
  const key = keyStore.get();
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra };
}

/** One call; answers the parsed JSON body or throws ApiError. */
export async function api(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: headers(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `The harness did not answer: ${error.message}`);
  }
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = json?.error;
    throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? text ?? response.statusText, error?.details);
  }
  return json;
}

/**
 * Fetch `path` (with the key) and save what it answers as the file `filename`: a link
 * cannot carry the Authorization header, so the body is read here and handed to the
 * browser as a blob. Throws ApiError as `api` does.
 */
export async function download(path, filename) {
  let response;
  try {
    response = await fetch(path, { headers: headers() });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `The harness did not answer: ${error.message}`);
  }
  if (!response.ok) {
    const body = await response.json().catch(() => undefined);
    throw new ApiError(response.status, body?.error?.code ?? `HTTP_${response.status}`, body?.error?.message ?? response.statusText, body?.error?.details);
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Split an SSE text stream into { event, data } frames. */
function* frames(buffer) {
  let at;
  while ((at = buffer.text.indexOf('\n\n')) >= 0) {
    const block = buffer.text.slice(0, at);
    buffer.text = buffer.text.slice(at + 2);
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) yield { event, data: JSON.parse(data.join('\n')) };
  }
}

/**
 * Follow /ui/api/events (with `query`, e.g. { endpoint, job }) until `signal` aborts;
 * `onEvent(event, data)` for each frame, `onState('open' | 'retrying' | error)`: an
 * error whose status is 0 when nothing answered, else the API's error.
 */
export async function followEvents(query, onEvent, onState, signal) {
  const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined)).toString();
  while (!signal.aborted) {
    let response;
    try {
      response = await fetch(`/ui/api/events${search ? `?${search}` : ''}`, { headers: headers(), signal });
    } catch (error) {
      if (signal.aborted) return;
      // Nothing answered: the page says so plainly (app.js shows a banner) and tries again.
      onState(new ApiError(0, 'NETWORK', `The harness did not answer: ${error.message}`));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    try {
      if (!response.ok) {
        const body = await response.json().catch(() => undefined);
        onState(new ApiError(response.status, body?.error?.code ?? `HTTP_${response.status}`, body?.error?.message ?? response.statusText));
        if (response.status === 401) return;
      } else {
        onState('open');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const buffer = { text: '' };
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer.text += value;
          for (const frame of frames(buffer)) onEvent(frame.event, frame.data);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    onState('retrying');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
