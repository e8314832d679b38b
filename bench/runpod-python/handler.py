"""
bench/runpod-python/handler.py: the worker of the runpod-python side of
bench/runpod-python.bench.ts, the counterpart of bench/children/bench-handler.ts.

BENCH_RUNPOD_HANDLER picks the handler, since runpod-python tells a streaming handler
from a plain one by the function itself (is_generator), not by what it returns:
- `noop` (default): answers {"ok": true} (runpod-python drops an output of {} and its
  /runsync then fails on the missing key, so the answer is not empty);
- `stream`: an async generator (as the Node handler is) yielding input.stream.count
  strings of input.stream.size characters, the text built once per size; with
  input.stream.objects true, {"i": i, "text": text} objects instead.
Run with the runpod-python flags: `--rp_serve_api --rp_api_port N --rp_api_host 127.0.0.1`,
or with the RUNPOD_WEBHOOK_* variables of a platform.
"""

import os

import runpod

_PATTERN = "lorem ipsum dolor sit amet, consectetur adipiscing elit. "
_TEXTS = {}


def _text(size):
    text = _TEXTS.get(size)
    if text is None:
        text = (_PATTERN * (size // len(_PATTERN) + 1))[:size]
        _TEXTS[size] = text
    return text


def noop(job):
    """A no-op job."""
    return {"ok": True}


async def stream(job):
    """`count` strings of `size` characters."""
    spec = (job.get("input") or {}).get("stream") or {}
    text = _text(int(spec.get("size", 1024)))
    if spec.get("objects"):
        for i in range(int(spec.get("count", 0))):
            yield {"i": i, "text": text}
        return
    for _ in range(int(spec.get("count", 0))):
        yield text


HANDLERS = {"noop": noop, "stream": stream}

runpod.serverless.start({"handler": HANDLERS[os.environ.get("BENCH_RUNPOD_HANDLER", "noop")]})
