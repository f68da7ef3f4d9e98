"""A local ``tokenizer.json`` (the ``tokenizers`` package, no model hub): loaded once with one
clear error, and a text's token count. Apart from ``prompts`` (which needs numpy) so that the
request loop (``stream.py``) can count tokens without importing numpy.
"""

from __future__ import annotations

from pathlib import Path

from kfp_bench.errors import ConfigError


def load_tokenizer(tokenizer: str):
    """The ``tokenizers.Tokenizer`` of a local tokenizer.json; ``ConfigError`` naming the file
    and the fix when the package is missing or the file is not one."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ConfigError(
            f"tokenizer {tokenizer}: the tokenizers package is not installed; pip install "
            "tokenizers, or leave the tokenizer out to count words"
        ) from None
    if not Path(tokenizer).is_file():
        raise ConfigError(f"tokenizer {tokenizer}: not found; give the path of a tokenizer.json")
    try:
        return Tokenizer.from_file(str(tokenizer))
    except Exception as e:  # the Rust side raises a bare Exception for any unreadable file
        raise ConfigError(
            f"tokenizer {tokenizer}: not a tokenizers tokenizer.json ({e}); give the "
            "tokenizer.json saved with a model (Tokenizer.save)"
        ) from None


def count_tokens(tok, text: str, special: bool) -> int:
    """``tok``'s count of ``text``. ``special``: with the special tokens its post-processor adds
    (a BOS), as a server counts a completion's prompt (vLLM's ``CompletionRequest``
    defaults ``add_special_tokens`` to True); without them for generated text."""
    return len(tok.encode(text, add_special_tokens=special).ids)
