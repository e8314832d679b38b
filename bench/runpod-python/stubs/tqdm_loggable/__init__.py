"""Stand-in for tqdm-loggable (not packaged by Debian): runpod-python imports it for uploads only, which the bench never does."""
