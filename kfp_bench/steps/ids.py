"""A benchmark's id: the benchmark_id parameter is a prefix, each pipeline run appends its own
part, and the labels and lease names made from it read the prefix back."""

from __future__ import annotations

import hashlib
import re

from kfp_bench.names import check_dns1123_label, dns1123_label

#: A benchmark id's length: NAME_PREFIX + id + "-00001" must stay a 63-character label.
MAX_ID = 40
#: The run's own part of a benchmark id made from a given prefix: hex digits of a SHA-256.
RUN_HASH_LEN = 10


def check_id(bid: str) -> str:
    """The benchmark_id parameter, checked: a DNS-1123 label of at most ``MAX_ID``."""
    # The id is in the name of the child pipeline, its versions and runs (kfp-bench-ID-00001):
    # in KFP's Kubernetes-native mode a pipeline's name is a Kubernetes object's name.
    if bid:
        check_dns1123_label(bid, "pipeline parameter benchmark_id=", MAX_ID)
    return bid


def benchmark_id_for(given: str, job_id: str) -> str:
    """The benchmark id of one pipeline run: always its own (issue 18).

    ``given`` (the benchmark_id parameter) is a prefix: its first 29 characters, "-", and 10 hex
    digits of the SHA-256 of ``job_id``, 40 characters at most. A recurring run passes every run
    the same parameters, so a fixed id would be shared by all its runs, and each run's cleanup
    would sweep the others'. Empty: ``job_id`` itself made a DNS-1123 label. The first step and
    the exit handler each derive it from the same two values, so they agree.
    """
    if not given:
        return dns1123_label(job_id or "run", MAX_ID)
    check_id(given)
    digest = hashlib.sha256((job_id or "run").encode("utf-8", "surrogatepass")).hexdigest()
    head = given[: MAX_ID - RUN_HASH_LEN - 1].rstrip("-")
    return f"{head}-{digest[:RUN_HASH_LEN]}"


def benchmark_label(bid: str) -> str:
    """The benchmark_id parameter as given, from the run's own id (``benchmark_id_for``: the
    given prefix + "-" + 10 hex digits); "kfp-bench" for an id made from the run's id (no
    benchmark_id given), as the lease's name (``kfp.lease.lease_name``). Stable across the runs
    of a recurring run, so that their pushes share a group."""
    found = re.fullmatch(rf"(.+)-[0-9a-f]{{{RUN_HASH_LEN}}}", bid)
    return found.group(1) if found else "kfp-bench"
