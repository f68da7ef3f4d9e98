"""kfp_bench.names: DNS-1123 labels from any text, and the check of names users give."""

from __future__ import annotations

import random
import re
import string

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.names import check_dns1123_label, dns1123_label, is_dns1123_label

RFC1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: Letters of many scripts, shell metacharacters, control characters and a lone surrogate.
ALPHABET = string.printable + "ÄéßĳΩЖ中文🙂\u0000\u202e\udc80" + "-" * 10 + "_." * 5


def _random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(ALPHABET, k=rng.randint(0, 200))) for _ in range(n)]


@pytest.mark.parametrize(
    "text, label",
    [
        ("sklearn-iris", "sklearn-iris"),
        ("Sklearn_Iris", "sklearn-iris"),
        ("  my model v2.1 ", "my-model-v2-1"),
        ("--a--b--", "a--b"),
        ("x; touch PWNED", "x-touch-pwned"),
        ("$(touch PWNED)", "touch-pwned"),
        ("2025-01-01", "2025-01-01"),
    ],
)
def test_sanitizes_to_a_label(text, label):
    assert dns1123_label(text) == label


def test_a_label_comes_back_unchanged():
    for label in ("a--b", "0", "a" * 63, "x-1-y"):
        assert dns1123_label(label) == label


def test_nothing_usable_becomes_a_hash():
    a, b = dns1123_label("!!!"), dns1123_label("???")
    assert RFC1123.match(a) and RFC1123.match(b) and a != b
    assert dns1123_label("") == dns1123_label("")


def test_too_long_is_cut_with_a_hash_and_stays_distinct():
    a = dns1123_label("run-" + "a" * 100 + "-1")
    b = dns1123_label("run-" + "a" * 100 + "-2")
    assert len(a) == len(b) == 63 and a != b
    assert a.startswith("run-aaaa") and re.search(r"-[0-9a-f]{8}$", a)


@pytest.mark.parametrize("max_len", [8, 9, 10, 20, 40, 63])
def test_respects_max_len(max_len):
    for text in _random_texts(200, seed=max_len):
        label = dns1123_label(text, max_len)
        assert RFC1123.match(label), (text, label)
        assert len(label) <= max_len


def test_property_many_random_strings():
    """Every output is a DNS-1123 label of at most 63 characters; the same input gives the same
    label; a label given in is returned unchanged; long inputs that differ give different
    labels."""
    texts = _random_texts(3000, seed=7)
    for text in texts:
        label = dns1123_label(text)
        assert RFC1123.match(label), (text, label)
        assert len(label) <= 63
        assert dns1123_label(text) == label
        assert dns1123_label(label) == label
        assert is_dns1123_label(label)
    long_texts = {t for t in texts if len(t) > 150}
    assert len({dns1123_label(t) for t in long_texts}) == len(long_texts)


def test_max_len_out_of_range():
    with pytest.raises(ValueError):
        dns1123_label("x", 7)
    with pytest.raises(ValueError):
        dns1123_label("x", 64)


@pytest.mark.parametrize("good", ["a", "0", "bench-1", "a" * 63, "20250101-120000-ab12"])
def test_check_accepts_labels(good):
    assert check_dns1123_label(good, "--name") == good


@pytest.mark.parametrize(
    "bad",
    ["", "-a", "a-", "A", "a_b", "a.b", "a b", "a" * 64, "x; touch PWNED", "é", None, 7],
)
def test_check_refuses_naming_the_input_and_the_fix(bad):
    with pytest.raises(ConfigError) as err:
        check_dns1123_label(bad, "--name")
    msg = str(err.value)
    assert msg.startswith(f"--name {bad!r}: not a DNS-1123 label")
    assert "lower-case letters, digits and dashes" in msg
    suggestion = msg.rsplit("e.g. ", 1)[1]
    assert RFC1123.match(suggestion)


def test_check_with_a_parameter_and_max_len():
    with pytest.raises(ConfigError, match=r"^isvc name='a-b-c-d-e-f': .* at most 10 .*e\.g\. "):
        check_dns1123_label("a-b-c-d-e-f", "isvc name=", max_len=10)
    assert check_dns1123_label("a-b-c-d-e", "isvc name=", max_len=10) == "a-b-c-d-e"
