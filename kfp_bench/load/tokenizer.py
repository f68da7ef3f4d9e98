"""A local ``tokenizer.json`` (the ``tokenizers`` package, no model hub): loaded once with one
clear error, a text's token count, a text of words built to a length in tokens, and each
prompt's count as a server makes it: a chat's messages rendered through the model's chat
template first. Apart from ``prompts`` (which needs numpy) so that the request loop
(``stream.py``) can count tokens without importing numpy.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from kfp_bench.errors import ConfigError
from kfp_bench.load.openai import chat_messages

# Imports inside functions: tokenizers and jinja2 come with the llm extra, and only a load that
# counts tokens needs them.


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


def counter(tokenizer: str) -> Callable[..., int]:
    """``count(text, special=True)``: a text's tokens, the tokenizer.json's (``count_tokens``)
    or, with no tokenizer, its whitespace words."""
    if not tokenizer:
        return lambda text, special=True: len(text.split())
    tok = load_tokenizer(tokenizer)
    return lambda text, special=True: count_tokens(tok, text, special)


def words_of_tokens(n: int, draw: Callable[[int], list[str]], count: Callable[..., int]) -> str:
    """The fewest words from ``draw`` (``draw(k)``: the next k words) whose text, joined by
    spaces, ``count`` makes ``n`` tokens or more (without added special tokens: a part of a
    prompt). A word is a token or more, so ``n`` words are drawn first, more while they fall
    short; the last word kept may take the text past ``n`` by its own extra tokens."""
    words = draw(n)
    while count(" ".join(words), False) < n:
        words += draw(n)
    lo, hi = 1, len(words)  # the fewest words reaching n: a text's tokens grow with its words
    while lo < hi:
        mid = (lo + hi) // 2
        if count(" ".join(words[:mid]), False) >= n:
            hi = mid
        else:
            lo = mid + 1
    return " ".join(words[:lo])


def chat_template(tokenizer: str) -> tuple[str, dict]:
    """The chat template saved beside ``tokenizer`` and the special tokens a template may name
    (``bos_token`` ...); ("", {}) when the folder has none. transformers 5 saves the template as
    ``chat_template.jinja``; earlier releases as ``tokenizer_config.json``'s ``chat_template``
    (a list of named templates gives its "default"). The special tokens are the config's."""
    folder = Path(tokenizer).parent
    cfg = folder / "tokenizer_config.json"
    try:
        doc = json.loads(cfg.read_text())
    except FileNotFoundError:
        doc = {}
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"{cfg}: not readable JSON ({e}); give the tokenizer_config.json saved with the "
            "model, or move it away to count chat prompts without their template"
        ) from None
    doc = doc if isinstance(doc, dict) else {}
    special = {k: v for k, v in doc.items() if k.endswith("_token") and isinstance(v, str)}
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(), special
    template = doc.get("chat_template")
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return (template, special) if isinstance(template, str) else ("", {})


def render_chat(template: str, messages: list[dict], special: dict, where: str) -> str:
    """``messages`` rendered through a chat template as transformers' ``apply_chat_template``
    renders it (a sandboxed jinja2 environment with trim_blocks and lstrip_blocks, the
    generation prompt added); ``where`` names the template in errors."""
    try:
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise ConfigError(
            f"{where}: rendering its chat template needs the jinja2 package; pip install jinja2"
        ) from None

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.globals["raise_exception"] = raise_exception
    try:
        return env.from_string(template).render(
            messages=messages, add_generation_prompt=True, **special
        )
    except jinja2.TemplateError as e:
        raise ConfigError(f"{where}: its chat template does not render ({e})") from None


def prompt_counts(tok, tokenizer: str, chat: bool, prompts) -> list[int]:
    """Each prompt's tokens as a server counts them.

    A completion's text with the special tokens the tokenizer's post-processor adds (a BOS:
    vLLM's ``CompletionRequest`` defaults ``add_special_tokens`` to True). A chat's messages
    rendered through the chat template beside the tokenizer, counted without added special
    tokens (``ChatCompletionRequest`` defaults it to False: the template writes its own); with
    no template there, the bare text, which leaves the template's tokens out (the notes say so).
    """

    template, special = chat_template(tokenizer) if chat else ("", {})
    if not template:
        return [count_tokens(tok, p.text, True) for p in prompts]
    where = f"tokenizer {tokenizer}"
    rendered = (render_chat(template, chat_messages(p), special, where) for p in prompts)
    return [count_tokens(tok, text, False) for text in rendered]
