"""Request bodies: reading payload files, and KServe V1 / V2 (Open Inference Protocol) payloads.

V1: ``{"instances": [...]}`` (KServe's V1 protocol, ``/v1/models/NAME:predict``).
V2: ``{"inputs": [{"name", "shape", "datatype", "data"}]}`` (``/v2/models/NAME/infer``).
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from kfp_bench.errors import PayloadError

_INTS = ("UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64")
#: The Open Inference Protocol's datatypes, by the kind of value drawn for each.
V2_DATATYPES = {
    "BOOL": "bool",
    **dict.fromkeys(_INTS, "int"),
    **dict.fromkeys(("FP16", "FP32", "FP64"), "float"),
    "BYTES": "bytes",
}


def parse_shape(text: str, flag: str) -> list[int]:
    """A shape such as ``1,4`` or ``[1, 4]``; every dimension a positive integer."""
    try:
        dims = [int(d) for d in text.strip("[]() ").split(",") if d.strip()]
    except ValueError:
        dims = []
    if not dims or any(d < 1 for d in dims):
        raise PayloadError(f"{flag} {text!r}: write the shape as positive integers, e.g. 1,4")
    if math.prod(dims) > 10_000_000:
        raise PayloadError(f"{flag} {text!r}: more than 10 million elements; use a smaller shape")
    return dims


def _values(n: int, kind: str, seed: int) -> list:
    rng = random.Random(seed)
    if kind == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if kind == "int":
        return [rng.randrange(0, 100) for _ in range(n)]
    if kind == "bytes":
        return [f"item-{i}" for i in range(n)]
    return [round(rng.uniform(0.0, 8.0), 3) for _ in range(n)]


def _nest(flat: list, shape: list[int]) -> list:
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def v1_payload(shape: list[int], seed: int = 0) -> bytes:
    """KServe V1 body: ``instances`` nested to ``shape`` (first dimension = instances)."""
    return json.dumps(
        {"instances": _nest(_values(math.prod(shape), "float", seed), shape)}
    ).encode()


def v2_payload(
    shape: list[int], datatype: str = "FP32", name: str = "input-0", seed: int = 0
) -> bytes:
    """Open Inference Protocol body with one input tensor, its data flattened row-major."""
    dt = datatype.upper()
    if dt not in V2_DATATYPES:
        raise PayloadError(
            f"--v2-datatype {datatype!r}: not an Open Inference Protocol datatype; use one of "
            + ", ".join(V2_DATATYPES)
        )
    data = _values(math.prod(shape), V2_DATATYPES[dt], seed)
    tensor = {"name": name, "shape": shape, "datatype": dt, "data": data}
    return json.dumps({"inputs": [tensor]}).encode()


def is_json_type(content_type: str) -> bool:
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct == "application/json" or ct.endswith("+json")


def read_body(data: str | None, path: str | None, content_type: str) -> bytes:
    """The body from -d or -D; when a JSON content type was asked for, it must parse as JSON."""
    if path:
        p = Path(path)
        try:
            body = p.read_bytes()
        except FileNotFoundError:
            raise PayloadError(
                f"-D {path}: no such file; give the path of the request body"
            ) from None
        except OSError as exc:
            raise PayloadError(f"-D {path}: cannot read it ({exc.strerror})") from None
        source = f"-D {path}"
    elif data is not None:
        body, source = data.encode(), "-d"
    else:
        return b""
    if is_json_type(content_type):
        try:
            json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PayloadError(
                f"{source}: not valid JSON ({exc}), but -T {content_type} asks for JSON; fix the "
                "body or change -T"
            ) from None
    return body
