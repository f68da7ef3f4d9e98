"""The local LLM server's prefix cache: vLLM's automatic prefix caching, counted as vLLM counts it.

A request's tokens (the server's tokens: the prompt's whitespace words) are cut into blocks of
``block_size``; each full block is named by a hash of its parent block's hash and its own
tokens (vLLM's hash chain, vllm/v1/core/kv_cache_utils.py ``hash_block_tokens``), so a block
matches only when every token before it matches too, and a partial block is never cached. A
lookup (vLLM's ``KVCacheManager.get_computed_blocks``, vllm/v1/core/kv_cache_manager.py) queries
every prompt token and hits the longest run of cached full blocks from the start, capped below
the prompt's length: the last prompt token is always computed (``max_cache_hit_length =
request.num_tokens - 1``). The request's full blocks are cached as it is admitted (vLLM's
``allocate_slots`` caches them when the request is scheduled), and the full blocks its answer
filled when it ends (the tokens computed: the prompt and every answer token but the last).

The cache holds ``capacity`` blocks and evicts the least recently used, a request's tail blocks
before its head (vLLM frees a request's blocks in reverse order, ``KVCacheManager.free``).
Unlike vLLM, a running request's blocks may be evicted: the server holds no KV memory to run
out of, and it never queues a request for blocks.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

#: vLLM's default KV-cache block size in tokens (``CacheConfig.block_size``).
BLOCK_SIZE = 16
_ROOT = b"kfp-bench prefix cache"


class PrefixCache:
    """Block hashes, least recently used first; ``capacity`` 0: no cache (nothing hits)."""

    def __init__(self, block_size: int = BLOCK_SIZE, capacity: int = 0) -> None:
        self.block_size = block_size
        self.capacity = capacity
        self._blocks: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def chain(self, tokens: list[str], start: bytes = _ROOT) -> list[bytes]:
        """The hashes of ``tokens``' full blocks, each of its parent's hash and its tokens."""
        out, parent, b = [], start, self.block_size
        for i in range(0, len(tokens) - b + 1, b):
            parent = hashlib.sha256(parent + "\0".join(tokens[i : i + b]).encode()).digest()
            out.append(parent)
        return out

    def extend(self, hashes: list[bytes], tokens: list[str]) -> list[bytes]:
        """The hashes of ``tokens``' full blocks, ``hashes`` those of its first ones."""
        start = hashes[-1] if hashes else _ROOT
        return hashes + self.chain(tokens[len(hashes) * self.block_size :], start)

    def lookup(self, prompt: list[str]) -> tuple[int, list[bytes]]:
        """Admit a prompt: (its tokens served from the cache, its full blocks' hashes). Its
        full blocks (those hit too) become the most recently used. Off: (0, [])."""
        if not self.capacity:
            return 0, []
        hashes = self.chain(prompt)
        limit = max(0, len(prompt) - 1) // self.block_size
        hit = 0
        while hit < min(limit, len(hashes)) and hashes[hit] in self._blocks:
            hit += 1
        self.store(hashes)
        return hit * self.block_size, hashes

    def store(self, hashes: list[bytes]) -> None:
        """Cache a request's blocks, its head the most recently used; evict beyond capacity."""
        if not self.capacity:
            return
        for h in reversed(hashes):  # the tail first: evicted before the head
            self._blocks[h] = None
            self._blocks.move_to_end(h)
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)
