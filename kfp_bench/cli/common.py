"""What every subcommand shares: the parser class, exit codes, durations and progress."""

from __future__ import annotations

import argparse
import sys
import time

from kfp_bench.errors import ConfigError
from kfp_bench.load import parse_duration

EXIT_BAD_INPUT = 2
EXIT_REGRESSION = 3
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    """argparse, with one-line errors: ``kfp-bench load: <what> (see --help)``."""

    def error(self, message):
        raise ConfigError(f"{message} (see {self.prog} --help)")


def duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class Progress:
    """A one-line progress display on stderr."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, requests: int, failed: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.5:
            return
        self.last = now
        t = now - self.start
        sys.stderr.write(
            f"\r  {t:6.1f}s  {requests} requests  {failed} failed  "
            f"{requests / t if t else 0:.0f} req/s "
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\n")
