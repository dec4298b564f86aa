"""A static model trained with the transformer as teacher (tokenlearn's recipe, our own small loop).

The distilled static model (codesearch/vector/static_model.py) sees every token alone; here its token table is fitted so that the
(weighted) mean of a chunk's token vectors points where the transformer's vector of the whole chunk points:
cosine loss against the teacher's vectors of real indexed chunks, a learnt linear map from the table's space to
the teacher's, and an L2 pull towards the distilled table so tokens seen a few times do not wander. Afterwards
the map is folded into the table (a QR factor keeps every inner product), so the result is a plain model2vec
folder of the same dimensions, loaded by StaticEncoder like any other.

The teacher pairs come from what an index already holds: a data home's vector chunks (their embedded text) and
the embedding cache's transformer vectors for them, so training needs no model call beyond those the
transformer tier made anyway. tokenlearn itself (PyPI 0.2.1) installs without changing versions but brings
datasets, pandas and pyarrow and trains through model2vec's own distillation, which lost the meaning of
WordPiece tokens here (codesearch/vector/static_model.py), so it is not used.

    python -m codesearch_lab.static.train --out DIR     # every repository of the configured home
    python -m codesearch_lab.static.train --home DATA_HOME --repo fastapi --repo cobra ... --validate aeson --out DIR

RECIPES.md has the command that made the shipped delta (codesearch/vector/static_deltas/stdlib.npz).

With no repository named it trains on the user's own indexed code (whatever the transformer tier has embedded),
so nothing has to ship: `CODESEARCH_STATIC_MODEL=DIR` then makes the static tier answer like its teacher there.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from codesearch.config import Settings
from codesearch.vector import static_delta
from codesearch.vector.embedding_cache import EmbeddingCache
from codesearch.vector.static_model import StaticEncoder

from codesearch_lab.static import delta as delta_file

# Training constants: runs validated on the polyglot FIT repository aeson (1,870 chunks), teacher MiniLM-int8.
LEARNING_RATE = 3e-3  # Adam; not tuned (one setting tried)
# Validation cosine to the teacher: 6 FIT repos (3,960 chunks) 0.658 (distilled) -> 0.716 at epoch 4, then down to
# 0.700 by epoch 11 (overfitting 4k chunks); the standard library (7,680) 0.649 -> 0.711 at epoch 3; both
# (10,680) 0.695 -> 0.768 at epoch 4, still rising; the standard library alone (9,920, a tenth held out for
# validation) 0.837 -> 0.904 at epoch 4, still rising; 13,376 (the shipped delta) 0.826 -> 0.900 at epoch 4.
# The best validation epoch is kept.
EPOCHS = 4
BATCH = 64  # chunks per step
ANCHOR_WEIGHT = 1e-3  # L2 pull towards the distilled table (per row, averaged); not tuned
SEED = 0
VALIDATION_SHARE = 0.1  # of the chunks, held out for early stopping when no validation repository is named


@dataclass
class TeacherPairs:
    texts: list[str]
    vectors: np.ndarray  # (n, teacher dims), unit rows


def teacher_pairs(
    vector_dir: Path,
    repos: list[str],
    cache: EmbeddingCache,
    model_id: str,
    exclude: frozenset[str] = frozenset(),
) -> TeacherPairs:
    """(embedded text, teacher vector) for every chunk of `repos` in a vector data folder that the embedding
    cache holds a `model_id` vector for, except chunks of the files in `exclude` (paths within a repository)."""
    texts: list[str] = []
    hashes: list[str] = []
    for repo in repos:
        root = vector_dir / repo
        current = (root / "CURRENT").read_text().strip()
        db = sqlite3.connect(f"file:{root / current / 'chunks.sqlite'}?mode=ro", uri=True)
        try:
            for path, doc_hash, doc_text in db.execute("SELECT path, doc_hash, doc_text FROM chunks"):
                if path in exclude:
                    continue
                texts.append(doc_text)
                hashes.append(doc_hash)
        finally:
            db.close()
    found = cache.get_many(model_id, hashes)
    keep = [i for i, h in enumerate(hashes) if h in found]
    if not keep:
        raise ValueError(f"the embedding cache holds no {model_id!r} vectors for {', '.join(repos)}")
    return TeacherPairs([texts[i] for i in keep], np.stack([found[hashes[i]] for i in keep]))


def repositories_in(vector_dir: Path) -> list[str]:
    """Every repository a vector data folder holds (a folder with a CURRENT generation)."""
    return (
        sorted(p.name for p in vector_dir.iterdir() if (p / "CURRENT").is_file())
        if vector_dir.is_dir()
        else []
    )


def split_off(pairs: TeacherPairs, share: float = VALIDATION_SHARE) -> tuple[TeacherPairs, TeacherPairs]:
    """(training, validation): a seeded random `share` of the pairs (at least one) held out for early stopping."""
    if len(pairs.texts) < 2:
        raise ValueError(f"{len(pairs.texts)} chunk(s) with teacher vectors: too few to train and validate")
    order = np.random.default_rng(SEED).permutation(len(pairs.texts))
    cut = max(1, round(len(order) * share))

    def pick(rows: np.ndarray) -> TeacherPairs:
        return TeacherPairs([pairs.texts[i] for i in rows], pairs.vectors[rows])

    return pick(order[cut:]), pick(order[:cut])


def train_table(
    base: np.ndarray,
    train: tuple[list[np.ndarray], np.ndarray],
    valid: tuple[list[np.ndarray], np.ndarray],
    epochs: int = EPOCHS,
    log=print,
) -> tuple[np.ndarray, np.ndarray]:
    """(table, W): the token table (same shape as `base`) and map after fitting mean(table[ids]) @ W to the
    teacher's vectors by cosine, at the best validation epoch. Rows of tokens no chunk holds stay `base`'s."""
    import torch

    torch.manual_seed(SEED)
    anchor = torch.from_numpy(base.astype(np.float32))
    table = torch.nn.Parameter(anchor.clone())
    # W starts as the least-squares map from the distilled means to the teacher's vectors.
    w0 = np.linalg.lstsq(_means(base, train[0]), train[1], rcond=None)[0]
    proj = torch.nn.Parameter(torch.from_numpy(w0.astype(np.float32)))
    opt = torch.optim.Adam([table, proj], lr=LEARNING_RATE)

    def batch_loss(ids: list[np.ndarray], target: np.ndarray) -> torch.Tensor:
        flat = torch.from_numpy(np.concatenate(ids))
        offsets = torch.from_numpy(np.cumsum([0] + [len(i) for i in ids[:-1]]))
        means = torch.nn.functional.embedding_bag(flat, table, offsets, mode="mean")
        cos = torch.nn.functional.cosine_similarity(means @ proj, torch.from_numpy(target), dim=1)
        return 1.0 - cos.mean()

    def evaluate() -> float:
        with torch.no_grad():
            return float(batch_loss(*valid))

    best = (evaluate(), table.detach().clone(), proj.detach().clone())
    log(f"epoch 0: validation cosine {1 - best[0]:.4f}")
    order = np.arange(len(train[0]))
    rng = np.random.default_rng(SEED)
    for epoch in range(1, epochs + 1):
        rng.shuffle(order)
        for s in range(0, len(order), BATCH):
            rows = order[s : s + BATCH]
            loss = batch_loss([train[0][i] for i in rows], train[1][rows])
            loss = loss + ANCHOR_WEIGHT * ((table - anchor) ** 2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = evaluate()
        log(f"epoch {epoch}: validation cosine {1 - val:.4f}")
        if val < best[0]:
            best = (val, table.detach().clone(), proj.detach().clone())
    return best[1].numpy(), best[2].numpy()


def fold_matrix(proj: np.ndarray) -> np.ndarray:
    """table @ proj has the rank of the table: W = R^T Q^T (QR of W^T), so table @ R^T keeps every inner
    product and norm of table @ W in the table's own dimensions. Returns R^T."""
    _, r = np.linalg.qr(proj.T)
    return r.T.astype(np.float32)


def trained_delta(
    base: np.ndarray, table: np.ndarray, proj: np.ndarray, meta: dict
) -> static_delta.StaticDelta:
    """What training changed, as a shippable delta over `base` (codesearch/vector/static_delta.py): the rows it
    moved, folded."""
    fold = fold_matrix(proj)
    moved = np.flatnonzero(np.any(table != base, axis=1))
    folded = table[moved] @ fold
    return delta_file.make(base, {int(r): folded[i] for i, r in enumerate(moved)}, fold, meta)


def _means(table: np.ndarray, ids: list[np.ndarray]) -> np.ndarray:
    return np.stack([table[i].mean(axis=0) if len(i) else np.zeros(table.shape[1], np.float32) for i in ids])


def save_model(encoder: StaticEncoder, table: np.ndarray, dest: Path) -> None:
    """A model2vec folder with the trained table (its weights baked in) and the base model's tokenizer."""
    from model2vec import StaticModel

    config = {"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": table.shape[1]}
    config |= {"normalize": True, "pooling": "mean", "teacher_trained": True}
    StaticModel(vectors=table, tokenizer=encoder.tokenizer, config=config, normalize=True).save_pretrained(
        str(dest)
    )


@dataclass
class TeacherSource:
    """Where teacher pairs come from: a vector data folder, its repositories, and the cache of teacher vectors."""

    vector_dir: Path
    repos: list[str]
    cache: EmbeddingCache
    teacher: str  # the transformer's model name
    teacher_id: str  # the id its vectors are cached under (model_id_for: names an int8 backend)


def add_teacher_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that say where teacher pairs come from (train and query_map fit)."""
    ap.add_argument(
        "--home", default="", help="data home whose vector leg holds the repositories (default: configured)"
    )
    ap.add_argument("--repo", action="append", default=[], help="repositories to fit on (default: all)")
    ap.add_argument("--cache", default="", help="the embedding cache file (default: the configured one)")
    ap.add_argument("--teacher", default="", help="the transformer (default: the configured one)")
    ap.add_argument(
        "--teacher-backend", default="", help="the backend its vectors came from (default: configured)"
    )


def teacher_source(
    args: argparse.Namespace, settings: Settings, leave_out: tuple[str, ...] = ()
) -> TeacherSource:
    """The teacher pairs' source from add_teacher_arguments' options; ValueError when the home holds nothing."""
    from codesearch.vector.embedder import model_id_for

    cache = EmbeddingCache(Path(args.cache) if args.cache else settings.embedding_cache_file())
    teacher = args.teacher or settings.embed_model
    teacher_id = model_id_for(teacher, args.teacher_backend or settings.embed_backend)
    vector_dir = Path(args.home).expanduser() / "vector" if args.home else settings.service_dir("vector")
    repos = args.repo or [r for r in repositories_in(vector_dir) if r not in leave_out]
    if not repos:
        raise ValueError(f"{vector_dir} holds no indexed repository")
    return TeacherSource(vector_dir, repos, cache, teacher, teacher_id)


def base_model_name(name: str) -> str:
    """The distilled (or plain) model a configured static model name builds on: a delta's base."""
    parts = static_delta.split_name(name)
    return parts[0] if parts else name


def main(argv: list[str] | None = None) -> int:
    from codesearch.common.models.quiet import quiet_libraries
    from codesearch.vector.static_model import static_model_path

    ap = argparse.ArgumentParser(
        prog="python -m codesearch_lab.static.train",
        description="train a static model with the transformer tier as teacher",
    )
    add_teacher_arguments(ap)
    ap.add_argument(
        "--validate", action="append", default=[], help="repositories for early stopping (default: a tenth)"
    )
    ap.add_argument(
        "--base",
        default="",
        help="static model to start from (default: the configured one, without its delta)",
    )
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument(
        "--exclude-paths", default="", help="a file of paths (one a line) whose chunks are not trained on"
    )
    ap.add_argument("--out", required=True, help="folder to write the trained model2vec model into")
    ap.add_argument("--delta-out", default="", help="also write the model as a delta over the base (.npz)")
    args = ap.parse_args(argv)
    settings = Settings.from_env()
    try:
        exclude = (
            frozenset(
                line.strip() for line in Path(args.exclude_paths).read_text().splitlines() if line.strip()
            )
            if args.exclude_paths
            else frozenset()
        )
        source = teacher_source(args, settings, leave_out=tuple(args.validate))
        repos, teacher = source.repos, source.teacher_id
        fit = teacher_pairs(source.vector_dir, repos, source.cache, teacher, exclude)
        if args.validate:
            val = teacher_pairs(source.vector_dir, args.validate, source.cache, teacher, exclude)
        else:
            fit, val = split_off(fit)
    except (OSError, ValueError, sqlite3.Error) as e:
        print(f"codesearch: {e}", file=sys.stderr)
        return 1
    # Training starts from the distilled table: a configured delta is left out, so a new delta is over
    # the base.
    base_name = args.base or base_model_name(settings.static_model)
    with quiet_libraries():  # after the data is there: a wrong home fails at once
        encoder = StaticEncoder(static_model_path(base_name, settings.model_cache))
    print(f"training on {len(fit.texts)} chunks, validating on {len(val.texts)}")
    table, proj = train_table(
        encoder.vectors,
        (encoder.token_ids(fit.texts), fit.vectors),
        (encoder.token_ids(val.texts), val.vectors),
        args.epochs,
    )
    save_model(encoder, table @ fold_matrix(proj), Path(args.out))
    print(f"wrote {args.out}")
    if args.delta_out:
        meta = {"base": base_name, "teacher": teacher, "chunks": len(fit.texts), "repositories": repos}
        delta = trained_delta(encoder.vectors, table, proj, meta)
        delta_file.save(delta, Path(args.delta_out))
        size = Path(args.delta_out).stat().st_size
        print(f"wrote {args.delta_out}: {len(delta.rows)} of {len(table)} rows trained, {size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
