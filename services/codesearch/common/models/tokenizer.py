"""Tokenizers straight from a model folder's tokenizer.json (the `tokenizers` library, no transformers import)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def fast_tokenizer(path: str, max_tokens: int):
    """texts (or (query, text) pairs) -> {input_ids, attention_mask, token_type_ids} (int64, padded to the
    longest). Straight from the folder's tokenizer.json with the `tokenizers` library when it has one: importing
    transformers for AutoTokenizer costs ~4 s and loads torch (measured), which the onnx backends otherwise
    never need. Pairs are truncated longest-first, as transformers' truncation=True does."""
    file = Path(path) / "tokenizer.json"
    if not file.is_file():
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(path, local_files_only=True)

        def with_transformers(texts: Sequence[str] | Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
            first = [t[0] for t in texts] if texts and isinstance(texts[0], tuple) else list(texts)
            second = [t[1] for t in texts] if texts and isinstance(texts[0], tuple) else None
            enc = auto(
                first, second, padding=True, truncation=True, max_length=max_tokens, return_tensors="np"
            )
            return {k: np.asarray(v, dtype=np.int64) for k, v in enc.items()}

        return with_transformers
    tok = load_tokenizer(path)
    pad = "[PAD]"
    special = Path(path) / "special_tokens_map.json"
    if special.is_file():
        entry = json.loads(special.read_text()).get("pad_token", pad)
        pad = entry["content"] if isinstance(entry, dict) else entry
    pad_id = tok.token_to_id(pad)
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(pad_id=pad_id if pad_id is not None else 0, pad_token=pad)

    def with_tokenizers(texts: Sequence[str] | Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        encs = tok.encode_batch(list(texts))
        return {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
        }

    return with_tokenizers


def load_tokenizer(path: str):
    """The folder's tokenizer.json as a `tokenizers.Tokenizer` with no padding or truncation set."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_counter(tok):
    """lines -> token counts without special tokens, for a `load_tokenizer` tokenizer."""

    def count(lines: Sequence[str]) -> list[int]:
        if not lines:
            return []
        return [len(e.ids) for e in tok.encode_batch(list(lines), add_special_tokens=False)]

    return count
