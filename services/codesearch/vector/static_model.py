"""The static embedding model of the vector leg's first tier: a model2vec model, named or distilled.

A static model maps each token to a fixed vector and averages them: no attention, so ~100x faster than a
transformer (vector/bench.py prints the ratio). It comes from one of:
- a model2vec folder, or a model2vec model in the Hugging Face cache (`minishlab/potion-code-16M` for a user
  with a network): loaded as is;
- a sentence-transformers model (by default the bundled all-MiniLM-L6-v2): distilled with model2vec into the
  machine-wide model cache the first time it is needed (~110 s on 2 busy cores, once per machine), in a child
  process so the service never imports torch for it and the library's progress bars stay off the terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from codesearch.common.models.cache import ONNX_SUBDIR, STATIC_SUBDIR, cache_key, first_usable
from codesearch.common.models.lookup import resolve_model_path
from codesearch.common.models.quiet import quiet_libraries
from codesearch.vector import static_delta

log = logging.getLogger(__name__)

# model2vec's default; 256 of MiniLM's 384 PCA dimensions kept NDCG@10 0.672 on 12 held-out repositories
# (issue #16) at two thirds of the memory per chunk.
DISTILL_DIMS = 256
DISTILL_TIMEOUT_S = 1800.0  # ~110 s measured on 2 busy cores; a stuck child must not hold the lock forever
MAX_TOKENS = 512  # tokens averaged per text: model2vec's default; a chunk is rarely longer
MAX_CHARS = (
    MAX_TOKENS * 8
)  # cut before tokenising: code averages ~4 characters a token, so this never binds early
DISTILL_BATCH = 512  # tokens per transformer call while distilling (3 positions each: tiny batches)
SIF_COEFFICIENT = 1e-4  # model2vec's default: a token's weight is a / (a + its Zipf probability)
UNUSED_TOKEN = re.compile(r"\[unused\d+\]")  # BERT's reserved slots: never produced by the tokenizer
ENCODE_BATCH = 1024  # texts per model2vec call (its default): batching only amortises Python overhead
# A document's head: the first HEAD_LINES lines of its structured text (common/doc_text.py: path words and
# breadcrumb, signature, docstring, the names the body uses), which a mean over every token of the body drowns.
# Late interaction (vector/late_interaction.py) re-scores the static tier's candidates with it. 4 lines led the
# paraphrase set when whole documents were pooled this way (3-5 lines a plateau on the polyglot FIT repositories).
HEAD_LINES = 4


def document_head(text: str) -> str:
    """The first HEAD_LINES lines of a document's text."""
    return "\n".join(text.split("\n", HEAD_LINES)[:HEAD_LINES])


def is_static_model_dir(path: Path) -> bool:
    """A folder holding a model2vec model (its config names the type)."""
    cfg = path / "config.json"
    if not cfg.is_file():
        return False
    with contextlib.suppress(ValueError, OSError):
        return json.loads(cfg.read_text()).get("model_type") == "model2vec"
    return False


def static_model_id(name: str) -> str:
    """The id vectors of this static model are stored under: distilled ones name how they were made, a delta
    (static_delta.py) its file's digest."""
    parts = static_delta.split_name(name)
    if parts is not None:
        try:
            made = static_delta.digest(static_delta.delta_file(parts[1]))
        except OSError:  # the model then fails to load and says why; the id only has to stay distinct
            made = parts[1]
        return f"{static_model_id(parts[0])}+{made}"
    path, _ = resolve_model_path(name)
    if Path(path).is_dir() and not is_static_model_dir(Path(path)):
        return f"{name}#model2vec-distilled-{DISTILL_DIMS}"
    return f"{name}#model2vec"


def distilled_dir(source_path: str, model_cache: Path) -> Path:
    return model_cache / STATIC_SUBDIR / f"{cache_key(source_path)}-d{DISTILL_DIMS}"


def static_model_path(name: str, model_cache: Path) -> str:
    """A folder (or cached hub name) for the configured static model, distilling it first when it names a
    transformer, and applying a delta when it names one (`BASE+DELTA`). Raises FileNotFoundError / RuntimeError /
    ValueError with what was looked at or what is wrong."""
    parts = static_delta.split_name(name)
    if parts is not None:
        delta = static_delta.delta_file(parts[1])
        static_delta.load(delta)  # a corrupt file fails here, before a base is distilled for it
        base = Path(static_model_path(parts[0], model_cache))
        return str(ensure_delta_applied(base, delta, model_cache))
    path, looked = resolve_model_path(name)
    p = Path(path)
    if p.is_dir():
        if is_static_model_dir(p):
            return path
        if (p / "config.json").is_file():
            return str(ensure_distilled(path, model_cache))
        raise FileNotFoundError(f"{path} holds neither a model2vec model nor a transformer to distil")
    # Not a folder: a model2vec model in the Hugging Face cache, if it is there (no network at run time).
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(name, local_files_only=True))
    except Exception as e:
        raise FileNotFoundError(
            f"static model {name!r} not found ({e.__class__.__name__}); looked in: {'; '.join(looked)}"
        ) from e


@contextlib.contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """One distillation per model per machine: other processes wait here and then find it done."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_distilled(source_path: str, model_cache: Path) -> Path:
    """The model2vec distillation of a transformer folder, made once into the model cache."""
    dest = distilled_dir(source_path, model_cache)
    if is_static_model_dir(dest):
        return dest
    with _exclusive(dest.with_name(dest.name + ".lock")):
        if is_static_model_dir(dest):
            return dest
        t0 = time.perf_counter()
        log.info("distilling a static model from %s into %s (once per machine)", source_path, dest)
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        env = {**os.environ, "TQDM_DISABLE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        cmd = [
            sys.executable,
            "-m",
            "codesearch.vector.static_model",
            source_path,
            str(tmp),
            str(model_cache),
        ]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=DISTILL_TIMEOUT_S)
        if done.returncode != 0 or not is_static_model_dir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"distilling {source_path} failed: {' | '.join(tail) or done.returncode}")
        os.replace(tmp, dest)
        log.info("static model ready in %.0fs: %s", time.perf_counter() - t0, dest)
    return dest


def distill_into(source_path: str, dest: Path, model_cache: Path, dims: int = DISTILL_DIMS) -> None:
    """Distils a sentence-transformers folder into a model2vec folder (what the child process runs).

    model2vec's recipe (its `distill` 0.7 turns the WordPiece vocabulary into a Unigram one and lost the
    meaning here: cosine 0.11 between "remove a temporary folder" and "how are temporary directories cleaned
    up"; its newer releases need an older transformers): every vocabulary token alone through the transformer
    ([CLS] token [SEP], mean-pooled like the model's sentence vectors), PCA to `dims`, and SIF weights from the
    token's rank (Zipf) baked in. The transformer runs as its ONNX export, so no torch here once exported."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from codesearch.common.models.encoder import OnnxEncoder

    encoder = first_usable([model_cache / ONNX_SUBDIR], lambda c: OnnxEncoder(source_path, 0, c, False))
    tokenizer = Tokenizer.from_file(str(Path(source_path) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    vocab = tokenizer.get_vocab()
    special = set(tokenizer.get_added_tokens_decoder())
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    ids = sorted(i for t, i in vocab.items() if i not in special and not UNUSED_TOKEN.fullmatch(t))
    hidden = np.zeros((len(ids), encoder.dims), dtype=np.float32)
    for s in range(0, len(ids), DISTILL_BATCH):
        part = np.asarray(ids[s : s + DISTILL_BATCH], dtype=np.int64)
        feed = {
            "input_ids": np.stack([np.full_like(part, cls_id), part, np.full_like(part, sep_id)], axis=1),
            "attention_mask": np.ones((len(part), 3), dtype=np.int64),
            "token_type_ids": np.zeros((len(part), 3), dtype=np.int64),
        }
        out = encoder.session.run(None, {k: v for k, v in feed.items() if k in encoder.inputs})[0]
        hidden[s : s + len(part)] = out.mean(axis=1)
    centred = hidden - hidden.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[:dims].T
    inv_rank = 1.0 / np.arange(2, len(ids) + 2)  # vocabulary order stands in for frequency (model2vec's Zipf)
    weights = SIF_COEFFICIENT / (SIF_COEFFICIENT + inv_rank / inv_rank.sum())
    vectors = np.zeros((tokenizer.get_vocab_size(), reduced.shape[1]), dtype=np.float32)
    vectors[ids] = reduced * weights[:, None]  # special and unused tokens stay zero: they never count
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": reduced.shape[1]}
    config |= {"normalize": True, "pooling": "mean", "sif_coefficient": SIF_COEFFICIENT, "apply_pca": dims}
    StaticModel(vectors=vectors, tokenizer=tokenizer, config=config, normalize=True).save_pretrained(
        str(dest)
    )


class StaticEncoder:
    """Unit vectors (float32) from a model2vec model: tokenise, average the (weighted) token vectors, normalise.

    The averaging is ours, not `StaticModel.encode`: a distilled MiniLM keeps its tokenizer's padding to 128
    tokens, and model2vec 0.7 averaged the pads in (short texts all pointed the same way)."""

    def __init__(self, path: str) -> None:
        try:
            from model2vec import StaticModel
        except ImportError as e:
            raise RuntimeError("the static tier needs the model2vec package (pip install model2vec)") from e
        with quiet_libraries():
            self.model = StaticModel.from_pretrained(path, force_download=False)
        self.dims = int(self.model.dim)
        vectors = np.asarray(self.model.embedding, dtype=np.float32)
        if self.model.token_mapping is not None:  # a vocabulary-quantised model: token id -> vector row
            vectors = vectors[np.asarray(self.model.token_mapping)]
        if self.model.weights is not None:  # SIF weights by token (frequent tokens count less), kept apart
            vectors = vectors * np.asarray(self.model.weights, dtype=np.float32)[:, None]
        self.vectors = vectors
        self.tokenizer = self.model.tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.keep = np.ones(len(self.vectors), dtype=bool)  # special tokens ([PAD], [UNK], ...) never count
        self.keep[list(self.tokenizer.get_added_tokens_decoder())] = False

    def token_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's token ids that count, in order (cut at MAX_CHARS / MAX_TOKENS, special tokens dropped)."""
        out = []
        for enc in self.tokenizer.encode_batch_fast([t[:MAX_CHARS] for t in texts], add_special_tokens=False):
            ids = np.asarray(enc.ids[:MAX_TOKENS], dtype=np.int64)
            out.append(ids[self.keep[ids]])
        return out

    def encode(self, texts: list[str], batch_size: int = ENCODE_BATCH) -> np.ndarray:
        """Each text's tokens averaged: a query's vector, and the token table's own space (training, maps)."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for s in range(0, len(texts), batch_size):
            for row, ids in enumerate(self.token_ids(texts[s : s + batch_size]), s):
                if len(ids):
                    out[row] = self.vectors[ids].mean(axis=0)
        return self._unit(out)

    def _unit(self, out: np.ndarray) -> np.ndarray:
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def load_static_encoder(name: str, model_cache: Path) -> StaticEncoder:
    """The encoder of a configured static model name. Raises as static_model_path."""
    return StaticEncoder(static_model_path(name, model_cache))


def ensure_delta_applied(base_dir: Path, delta_path: Path, model_cache: Path) -> Path:
    """The model2vec folder of `base_dir`'s model with a delta (static_delta.py) applied, made once into the
    model cache (a second of numpy)."""
    from model2vec import StaticModel

    dest = static_delta.applied_dir(base_dir, delta_path, model_cache)
    if is_static_model_dir(dest):
        return dest
    delta = static_delta.load(delta_path)
    encoder = StaticEncoder(str(base_dir))
    table = static_delta.apply(delta, encoder.vectors)
    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": table.shape[1]}
    config |= {"normalize": True, "pooling": "mean", "static_delta": delta_path.name, **delta.meta}
    tmp = dest.with_name(f"{dest.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    StaticModel(vectors=table, tokenizer=encoder.tokenizer, config=config, normalize=True).save_pretrained(
        str(tmp)
    )
    try:
        os.replace(tmp, dest)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
        if not is_static_model_dir(dest):
            raise
    return dest


def main(argv: list[str] | None = None) -> int:
    """`python -m codesearch.vector.static_model --prepare [NAME]`: makes the configured static model in the
    model cache ahead of time (an image build). `SOURCE DEST MODEL_CACHE`: distils SOURCE (a transformer folder)
    to DEST, with SOURCE's ONNX export in MODEL_CACHE (what ensure_distilled runs in a child process)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--prepare"] and len(args) <= 2:
        from codesearch.config import Settings

        settings = Settings.from_env()
        name = args[1] if len(args) == 2 else settings.static_model
        print(static_model_path(name, settings.model_cache))
        return 0
    if len(args) != 3:
        print(
            "usage: python -m codesearch.vector.static_model --prepare [NAME] | SOURCE_DIR DEST_DIR MODEL_CACHE",
            file=sys.stderr,
        )
        return 2
    with quiet_libraries(loads_transformers=True):
        distill_into(args[0], Path(args[1]), Path(args[2]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
