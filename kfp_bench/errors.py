"""The one exception tree of kfp-bench.

::

    BenchError                    base: every error kfp-bench raises on purpose
    ├── ConfigError               bad input (flags, files, parameters), raised before sending
    │   └── PayloadError          a request body that cannot be read or is not what was asked for
    ├── ResultsError              a saved result that is missing, malformed or of another version
    ├── EngineError               the load engine hit a bug of its own mid-attack (stats kept)
    ├── KfpApiError               a KFP API call the benchmark cannot go on without failed
    ├── LeaseError                another live benchmark of that id holds the lease (kfp/lease.py)
    ├── KubeError                 a Kubernetes call (InferenceService, pods) failed
    │   ├── NotReadyError         an InferenceService was not ready in time (it was deleted)
    │   └── NotOursError          the InferenceService name is taken by one not this benchmark's
    ├── HistoryError              the results history (--results-uri) cannot be read or written
    │   ├── BaselineError         a baseline with too few samples for a regression verdict
    │   └── UnknownKeyError       a --baseline key the history does not hold (bad input: exit 2)
    ├── PushError                 the Pushgateway (--pushgateway-url) did not take the push
    ├── BundleTooLarge            a report's summary.md outgrew its limit (a reporter's bug)
    └── ServerError               a server kfp-bench started itself could not be started or reached

A failed request during a benchmark is *not* an exception: it is a measurement, stored in the
``error`` field of its record. Every message names the input at fault and the fix.
"""


class BenchError(Exception):
    """Base class of every error kfp-bench raises on purpose. ``exit_code``: the command's exit
    code when it ends in this error (``kfp_bench.outcome``); 1 unless the raiser says more."""

    exit_code = 1


class ConfigError(BenchError, ValueError):
    """A flag, file or parameter is invalid; nothing has been sent yet."""


class PayloadError(ConfigError):
    """A request body could not be read, or is not valid for the type that was asked for."""


class ResultsError(BenchError):
    """A saved result cannot be used: missing, malformed, or written by an incompatible version."""


class EngineError(BenchError):
    """An exception escaped one of the load engine's own callbacks or tasks: a bug in kfp-bench,
    not a fault of the server. The attack ended there; ``stats`` holds what was measured before
    it (flagged ``engine-error``), and the traceback was logged when it happened. A rate sweep
    raises it with ``partial``: the ``SweepResult`` of the steps that finished before."""

    def __init__(self, message: str, stats=None, partial=None):
        super().__init__(message)
        self.stats = stats
        self.partial = partial


class KfpApiError(BenchError):
    """A KFP API call that the benchmark cannot go on without (upload, create experiment) failed.

    Raised after the failed call was recorded and whatever was created before it cleaned up.
    """


class LeaseError(BenchError):
    """Another benchmark of the same benchmark_id holds the lease and has not expired (or the
    lease's name is taken by an experiment that is no lease). Nothing was created; the message
    names the holder, its expiry and the fix."""


class KubeError(BenchError):
    """A Kubernetes API call the benchmark cannot go on without failed (create, get, delete)."""


class NotReadyError(KubeError):
    """An InferenceService did not become ready in time; the message names the failing
    condition. What was created has been deleted."""


class NotOursError(KubeError):
    """An InferenceService of the name to deploy exists already, not made by this run of the
    benchmark (a user's, another benchmark's, or an earlier attempt's). Nothing was created,
    changed or deleted; the message says whose it is."""


class HistoryError(BenchError):
    """The results history cannot be used: no credentials, no such bucket, a key not found."""


class BaselineError(HistoryError):
    """A baseline too small for a regression verdict; no verdict is guessed."""


class UnknownKeyError(HistoryError):
    """A history key asked for (``--baseline KEY``) that the history does not hold complete.
    Found by reading the history, but no rerun finds it: bad input, exit 2."""

    exit_code = 2


class PushError(BenchError):
    """The Pushgateway could not be reached or refused the push (``kfp_bench.push``). The
    benchmark's own result is written and shown before the push; exit 5, as for results that
    could not be written where asked (``kfp_bench.outcome``)."""

    exit_code = 5


class BundleTooLarge(BenchError):
    """A report bundle's summary.md (predict or LLM) would reach ``report.markdown.MAX_BYTES``:
    a bug in the reporter's row limits, not in the results. Nothing was written; the results
    are intact, and ``kfp-bench report`` rebuilds the report once the limits are mended."""


class ServerError(BenchError):
    """A local server that kfp-bench starts (model server, test server) failed to come up."""


def yaml_error(exc: Exception, source: str) -> str:
    """PyYAML's error of many lines (the snippet, its caret) as one, ``SOURCE:LINE:COL: what``,
    for a message of its own input at fault."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
    what = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    return f"{where}: {' '.join(str(what).split())}"
