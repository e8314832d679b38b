"""
Compatibility shim for bench/runpod-python.bench.ts, loaded by Python at start (this
folder is on PYTHONPATH): runpod-python 1.12 builds aiohttp.ClientTimeout(600,
ceil_threshold=400), an argument aiohttp took in 3.9; Debian 12 packages aiohttp 3.8.4.
With an older aiohttp the argument is dropped (it only tunes how timeouts are rounded).
"""

import inspect

try:
    import aiohttp

    _ClientTimeout = aiohttp.ClientTimeout
    if "ceil_threshold" not in inspect.signature(_ClientTimeout).parameters:

        def _client_timeout(*args, ceil_threshold=None, **kwargs):  # pylint: disable=unused-argument
            return _ClientTimeout(*args, **kwargs)

        aiohttp.ClientTimeout = _client_timeout
except ImportError:
    pass
