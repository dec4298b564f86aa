"""A static model trained on code: the distilled MiniLM token table fitted contrastively on mined pairs.

Each mined pair (codesearch_lab/mining: a doc comment or docstring and the definition it documents, a file header
and its file, a README section and a file it names) is a question and its answer. The static model embeds both the
same way (the mean of the text's token vectors, StaticEncoder), so one token table is trained: the description's
vector should be nearer its own code than every other code in the batch (MultipleNegativesRankingLoss, both
directions, scale 20 as sentence-transformers). A batch holds one language only, so the negatives are code of the
same language: harder than a mix, where the language's own tokens tell the code apart. An L2 pull towards the
distilled table keeps rarely seen tokens where the teacher put them. The result is a delta over the distilled
table (codesearch/vector/static_delta.py), shipped as `vector/static_deltas/code.npz`: `all-MiniLM-L6-v2+code`.

Validation is grouped by package: a seeded share of the packages is held out whole, and each epoch measures how
often a held-out description finds its own code first among POOL of them (MRR, recall@10). The best epoch is kept.

    python -m codesearch_lab.static.contrastive --shards ~/.cache/codesearch/mining/shards \\
        --out /tmp/code-model --delta-out services/codesearch/vector/static_deltas/code.npz

RECIPES.md has the exact command and the data manifest behind the shipped file.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from codesearch.config import Settings
from codesearch.vector.static_model import StaticEncoder, load_static_encoder, static_model_path

from codesearch_lab.static import delta as delta_file
from codesearch_lab.static.train import save_model

BASE = "all-MiniLM-L6-v2"  # the distilled MiniLM table (model cache), the start the issue names
SEED = 0
EPOCHS = 3
BATCH = 256  # pairs per step: 255 negatives each; a bigger batch is a harder task at the same cost per pair
LEARNING_RATE = 2e-3  # Adam
SCALE = 20.0  # logits = SCALE * cosine (sentence-transformers' MNRL default)
ANCHOR_WEIGHT = 1e-4  # L2 pull towards the distilled table, per row, averaged over the table
VALIDATION_SHARE = 0.03  # of the packages, held out whole for early stopping
POOL = 1000  # held-out pairs per retrieval pool in validation
MAX_PER_DESCRIPTION = 3  # pairs kept per identical description ("Returns the value."): the rest teach nothing


@dataclass
class Pairs:
    descriptions: list[str]
    codes: list[str]
    languages: list[str]
    packages: list[str]


def read_shards(folder: Path, max_pairs: int = 0, max_shards: int = 0) -> tuple[Pairs, list[str]]:
    """Every pair in the complete shards of a mining run (`pairs-*.jsonl.gz`, never `.tmp`; the first `max_shards`
    when set, so a rebuild reads what a run still growing had then), and the shard names. Identical
    descriptions beyond MAX_PER_DESCRIPTION are dropped."""
    shards = sorted(folder.glob("pairs-*.jsonl.gz"))
    shards = shards[:max_shards] if max_shards else shards
    if not shards:
        raise ValueError(f"{folder} holds no pairs-*.jsonl.gz shard")
    out = Pairs([], [], [], [])
    seen: dict[str, int] = defaultdict(int)
    for shard in shards:
        with gzip.open(shard, "rt", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                key = r["description"].strip().lower()
                seen[key] += 1
                if seen[key] > MAX_PER_DESCRIPTION:
                    continue
                out.descriptions.append(r["description"])
                out.codes.append(r["code"])
                out.languages.append(r["language"])
                out.packages.append(f"{r['registry']}:{r['package']}")
                if max_pairs and len(out.codes) >= max_pairs:
                    return out, [s.name for s in shards]
    return out, [s.name for s in shards]


def held_out(package: str, share: float = VALIDATION_SHARE) -> bool:
    """A package is held out by a hash of its name: the same packages on every run and every machine."""
    h = int.from_bytes(hashlib.blake2b(f"{SEED}:{package}".encode(), digest_size=8).digest(), "big")
    return h / 2**64 < share


def language_batches(
    languages: list[str], rows: list[int], batch: int, rng: random.Random
) -> Iterator[list[int]]:
    """Batches of one language each, in a random order; a language's last partial batch is dropped when under
    a quarter of a batch (too few negatives)."""
    by_language: dict[str, list[int]] = defaultdict(list)
    for i in rows:
        by_language[languages[i]].append(i)
    batches = []
    for members in by_language.values():
        rng.shuffle(members)
        for s in range(0, len(members), batch):
            part = members[s : s + batch]
            if len(part) >= max(2, batch // 4):
                batches.append(part)
    rng.shuffle(batches)
    yield from batches


def train_table(
    base: np.ndarray,
    desc_ids: list[np.ndarray],
    code_ids: list[np.ndarray],
    languages: list[str],
    train_rows: list[int],
    valid_rows: list[int],
    epochs: int = EPOCHS,
    log: Callable[[str], None] = print,
    batch: int = BATCH,
    learning_rate: float = LEARNING_RATE,
) -> tuple[np.ndarray, dict]:
    """The token table after contrastive training, at the best validation epoch, and the validation figures.
    With fewer than 2 validation pairs there is nothing to choose by: the last epoch is kept."""
    import torch

    torch.manual_seed(SEED)
    anchor = torch.from_numpy(base.astype(np.float32))
    table = torch.nn.Parameter(anchor.clone())
    opt = torch.optim.Adam([table], lr=learning_rate)

    def embed(ids: list[np.ndarray], weights: torch.Tensor) -> torch.Tensor:
        lengths = [max(len(i), 1) for i in ids]
        flat = torch.from_numpy(np.concatenate([i if len(i) else np.zeros(1, np.int64) for i in ids]))
        offsets = torch.from_numpy(np.cumsum([0] + lengths[:-1]))
        means = torch.nn.functional.embedding_bag(flat, weights, offsets, mode="mean")
        return torch.nn.functional.normalize(means, dim=1)

    def evaluate() -> dict:
        with torch.no_grad():
            ranks = []
            starts = list(range(0, len(valid_rows), POOL))
            if len(starts) > 1 and len(valid_rows) - starts[-1] < POOL // 2:
                starts.pop()  # a short last pool joins the one before: every pool is a comparable task
            for n, s in enumerate(starts):
                rows = valid_rows[s : starts[n + 1] if n + 1 < len(starts) else len(valid_rows)]
                if len(rows) < 2:
                    continue
                q = embed([desc_ids[i] for i in rows], table)
                d = embed([code_ids[i] for i in rows], table)
                sims = q @ d.T
                own = sims.diagonal().unsqueeze(1)
                ranks += (sims > own).sum(1).tolist()
        r = np.asarray(ranks)
        if not len(r):
            return {"mrr": float("nan"), "recall@10": float("nan"), "pairs": 0}
        return {"mrr": float(np.mean(1.0 / (r + 1))), "recall@10": float(np.mean(r < 10)), "pairs": len(r)}

    best = evaluate()
    best_table = table.detach().clone()
    log(
        f"epoch 0: validation MRR {best['mrr']:.4f}, recall@10 {best['recall@10']:.4f} ({best['pairs']} pairs)"
    )
    rng = random.Random(SEED)
    history = [best]
    for epoch in range(1, epochs + 1):
        t0, steps, total = time.perf_counter(), 0, 0.0
        for rows in language_batches(languages, train_rows, batch, rng):
            q = embed([desc_ids[i] for i in rows], table)
            d = embed([code_ids[i] for i in rows], table)
            logits = SCALE * (q @ d.T)
            target = torch.arange(len(rows))
            loss = (
                torch.nn.functional.cross_entropy(logits, target)
                + torch.nn.functional.cross_entropy(logits.T, target)
            ) / 2
            loss = loss + ANCHOR_WEIGHT * ((table - anchor) ** 2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            total += float(loss.detach())
            if steps % 200 == 0:
                log(
                    f"  epoch {epoch} step {steps}: loss {total / steps:.4f} ({time.perf_counter() - t0:.0f} s)"
                )
        val = evaluate()
        history.append(val)
        log(
            f"epoch {epoch}: loss {total / max(steps, 1):.4f}, validation MRR {val['mrr']:.4f}, "
            f"recall@10 {val['recall@10']:.4f} ({time.perf_counter() - t0:.0f} s)"
        )
        if val["mrr"] > best["mrr"] or not val["pairs"]:
            best, best_table = val, table.detach().clone()
    return best_table.numpy(), {"best": best, "epochs": history}


def main(argv: list[str] | None = None) -> int:
    from codesearch.common.models.quiet import quiet_libraries

    ap = argparse.ArgumentParser(
        prog="python -m codesearch_lab.static.contrastive",
        description="train the static model's token table contrastively on mined (description, code) pairs",
    )
    ap.add_argument("--shards", type=Path, required=True, help="a mining run's shards folder")
    ap.add_argument("--base", default=BASE, help="the distilled model the delta is written over")
    ap.add_argument(
        "--start", default="", help="static model whose table training starts from (default: --base itself)"
    )
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--max-pairs", type=int, default=0, help="read at most this many pairs (0: all)")
    ap.add_argument("--max-shards", type=int, default=0, help="read the first this many shards (0: all)")
    ap.add_argument("--batch", type=int, default=BATCH, help="pairs per step (the in-batch negatives)")
    ap.add_argument("--learning-rate", type=float, default=LEARNING_RATE)
    ap.add_argument(
        "--out", type=Path, required=True, help="folder to write the trained model2vec model into"
    )
    ap.add_argument(
        "--delta-out", type=Path, default=None, help="also write it as a delta over the base (.npz)"
    )
    args = ap.parse_args(argv)
    settings = Settings.from_env()
    try:
        pairs, shards = read_shards(args.shards.expanduser(), args.max_pairs, args.max_shards)
    except (OSError, ValueError) as e:
        print(f"codesearch: {e}", file=sys.stderr)
        return 1
    with quiet_libraries():
        encoder = StaticEncoder(static_model_path(args.base, settings.model_cache))
        start = (
            load_static_encoder(args.start, settings.model_cache).vectors if args.start else encoder.vectors
        )
    if start.shape != encoder.vectors.shape:
        print(f"codesearch: {args.start} has another table shape than {args.base}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    desc_ids = encoder.token_ids(pairs.descriptions)
    code_ids = encoder.token_ids(pairs.codes)
    rows = [i for i in range(len(pairs.codes)) if len(desc_ids[i]) and len(code_ids[i])]
    valid = [i for i in rows if held_out(pairs.packages[i])]
    if not valid or len(valid) == len(rows):  # too few packages to hold any out whole: a share of the pairs
        valid = [i for i in rows if random.Random(f"{SEED}:{i}").random() < VALIDATION_SHARE] or rows[:1]
    valid_set = set(valid)
    train = [i for i in rows if i not in valid_set]
    random.Random(SEED).shuffle(valid)  # pools mix packages and languages
    counts: dict[str, int] = defaultdict(int)
    for i in train:
        counts[pairs.languages[i]] += 1
    print(
        f"{len(train)} training pairs, {len(valid)} held out ({len({pairs.packages[i] for i in valid})} packages), "
        f"tokenised in {time.perf_counter() - t0:.0f} s; by language: {dict(sorted(counts.items()))}",
        flush=True,
    )
    t1 = time.perf_counter()
    table, figures = train_table(
        start,
        desc_ids,
        code_ids,
        pairs.languages,
        train,
        valid,
        args.epochs,
        batch=args.batch,
        learning_rate=args.learning_rate,
    )
    seconds = time.perf_counter() - t1
    save_model(encoder, table, args.out)
    print(f"wrote {args.out} (trained in {seconds:.0f} s)")
    if args.delta_out:
        base = encoder.vectors
        moved = np.flatnonzero(np.any(table != base, axis=1))
        if not len(moved):
            print("codesearch: training moved no row of the table: no delta written", file=sys.stderr)
            return 1
        meta = {
            "base": args.base,
            "start": args.start or args.base,
            "trained": "contrastive (MNRL, one language per batch) on mined (description, code) pairs",
            "pairs": len(train),
            "languages": dict(sorted(counts.items())),
            "shards": shards,
            "seed": SEED,
            "epochs": args.epochs,
            "batch": args.batch,
            "learning_rate": args.learning_rate,
            "validation": figures["best"],
            "train_seconds": round(seconds),
        }
        fold = np.eye(base.shape[1], dtype=np.float32)  # no map to fold: the table stays in its own space
        delta = delta_file.make(base, {int(r): table[r] for r in moved}, fold, meta)
        delta_file.save(delta, args.delta_out)
        size = args.delta_out.stat().st_size
        print(f"wrote {args.delta_out}: {len(moved)} of {len(table)} rows trained, {size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
