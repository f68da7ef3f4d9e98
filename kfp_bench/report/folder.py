"""What the predict and the LLM report bundles share: summary.md's size limit and the folder
write, whole or not at all (``kfp_bench.atomic.folder``), gates.json included when gates were
given."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from kfp_bench import atomic
from kfp_bench.errors import BundleTooLarge
from kfp_bench.gates import GATES_FILE
from kfp_bench.gates import write as write_gates

#: summary.md stays under this many bytes: the KFP UI's Markdown viewer and chat tools choke on
#: large files (the reporters cut long tables to stay well under it).
MAX_BYTES = 400_000

#: A file's content: text (UTF-8), bytes, or a function that writes the file at the path given.
Body = str | bytes | Callable[[Path], None]


def summary_bytes(text: str) -> bytes:
    """summary.md's bytes; ``BundleTooLarge`` when they reach ``MAX_BYTES``."""
    data = text.encode("utf-8")
    if len(data) >= MAX_BYTES:
        raise BundleTooLarge(f"summary.md would be {len(data)} bytes (limit {MAX_BYTES})")
    return data


def metrics_json(metrics: dict) -> str:
    """metrics.json's text: the flat ``{name: number}`` metrics, one a line."""
    return json.dumps(metrics, indent=1) + "\n"


def write_folder(
    out_dir: str | os.PathLike, files: Mapping[str, Body], verdicts=None
) -> dict[str, Path]:
    """Write ``files`` (name -> body, in the order listed) into ``out_dir``, and gates.json when
    ``verdicts`` is not None, whole or not at all; other files in ``out_dir`` are carried over.

    Returns:
        Each file's name mapped to its path in ``out_dir``, gates.json last when written.
    """
    out = Path(out_dir)
    with atomic.folder(out, fresh=(*files, GATES_FILE)) as stage:
        for name, body in files.items():
            if isinstance(body, bytes):
                (stage / name).write_bytes(body)
            elif isinstance(body, str):
                (stage / name).write_text(body, encoding="utf-8")
            else:
                body(stage / name)
        if verdicts is not None:
            write_gates(stage, verdicts)
    names = (*files, *([GATES_FILE] if verdicts is not None else ()))
    return {name: out / name for name in names}
