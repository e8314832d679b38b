"""
Stand-in for aiohttp-retry (not packaged by Debian), for bench/runpod-python.bench.ts only.

runpod-python posts results and stream chunks through RetryClient(client_session,
retry_options=FibonacciRetry(attempts=3)).post(url, **kwargs) used as an async context
manager. This passes the post to the aiohttp session and retries it on a connection error
or a 5xx answer, up to `attempts` times, as the real one does (without its waits: the
bench's fake platform never fails).
"""

import aiohttp


class FibonacciRetry:
    """Only the number of attempts is kept."""

    def __init__(self, attempts=3, **kwargs):
        self.attempts = attempts


class _Post:
    def __init__(self, session, attempts, url, kwargs):
        self._session = session
        self._attempts = attempts
        self._url = url
        self._kwargs = kwargs
        self._response = None

    async def __aenter__(self):
        for attempt in range(1, self._attempts + 1):
            try:
                response = await self._session.post(self._url, **self._kwargs)
            except aiohttp.ClientError:
                if attempt == self._attempts:
                    raise
                continue
            self._response = response
            return response
        raise RuntimeError("unreachable")

    async def __aexit__(self, *exc):
        if self._response is not None:
            self._response.release()
        return False


class RetryClient:
    """client_session and retry_options as aiohttp_retry.RetryClient takes them."""

    def __init__(self, client_session=None, retry_options=None, **kwargs):
        self._session = client_session
        self._attempts = retry_options.attempts if retry_options is not None else 3

    def post(self, url, **kwargs):
        return _Post(self._session, self._attempts, url, kwargs)
