"""Self-supervised fine-tuning of the reranker on a repository's own source (`codesearch reranker train`).

Pairs are mined from the code: a docstring's first sentence -> its definition (half of them with that sentence
removed, so the task is not copying), and an identifier -> its definition; hard negatives are the other
definitions BM25 or the bi-encoder rank highest (rerank/pairs.py). The reranker is a gated cross-encoder
(rerank/gated.py) made from the bundled all-MiniLM-L6-v2 bi-encoder: it starts as exactly that bi-encoder and is
trained with a listwise loss, embeddings and lower layers frozen (CPU budget; rerank/finetune.py). Then a
logistic blend of its score, the bi-encoder cosine and the lexical overlap is fit on a held-apart split of
files, so its scores are calibrated probabilities (rerank/blend_fit.py). Files are split three ways (train /
blend fit / test); the report gives held-out MRR of every scorer on the test files, the first-stage BM25,
bi-encoder and their fused order (reciprocal rank fusion) among them.

    python -m codesearch.rerank.train --path DIR [--path DIR2 ...] [--repo NAME] [--budget-minutes 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from codesearch.common.models.lookup import model_path
from codesearch.common.models.threads import configure_torch_threads
from codesearch.config import Settings
from codesearch.rerank import gated
from codesearch.rerank import text as rtext
from codesearch.rerank.blend_fit import (
    BLEND_CANDIDATES,
    CHOSEN_BLENDS_NEED,
    MIN_COS_GAIN,
    fit_logistic,
    fused,
    mrr,
)
from codesearch.rerank.finetune import BASE_MODEL, score_pairs, train_gated
from codesearch.rerank.model import BLEND_FILE, Blend, trained_model_dir
from codesearch.rerank.pairs import (
    BM25,
    GROUP_NEGATIVES,
    HARD_POOL,
    SEED,
    Definition,
    Group,
    groups,
    keeps_sentence,
    mine,
    split_of,
)

log = logging.getLogger(__name__)

MAX_LENGTH = 128  # bench.py: 256 tokens doubles the cost of every step and scoring call
QUERY_TOKEN_RESERVE = 24  # room left for the query when trimming candidates (most queries are shorter)
# Definitions embedded and searched for negatives; bounds the bi-encoder pass to ~1-3 min of CPU.
MAX_POOL = 800
MAX_TEST_GROUPS = 100  # 100 x 20 pairs: ~1-4 min of contended CPU scoring; MRR within ~+-0.05
MAX_BLEND_GROUPS = 60  # 60 x 20 pairs: plenty for 2-3 weights
TRAIN_NEGATIVES = 3  # per query per step: more queries per step beat more negatives per query at this budget
GROUPS_PER_STEP = 8  # 8 x (1 + 3) = 32 pairs a step
# Fewer seconds of training than this barely move the model (~3 s a step on 2 cores); the cross-encoder is then
# neither trained nor scored, and the blend is fit without it.
MIN_CE_TRAIN_S = 120.0


@dataclass
class TrainReport:
    repository: str
    path: str
    device: str
    definitions: int
    train_queries: int
    blend_groups: int
    test_groups: int
    steps: int
    pairs_trained: int
    train_seconds: float
    max_length: int
    chosen: str
    weights: dict[str, float]
    bias: float
    mrr: dict[str, float] = field(default_factory=dict)
    mrr_by_kind: dict[str, dict[str, float]] = field(default_factory=dict)
    out_dir: str = ""
    elapsed_seconds: float = 0.0

    def table(self) -> str:
        kinds = sorted(self.mrr_by_kind)
        head = "| scorer | MRR (all) | " + " | ".join(f"MRR ({k})" for k in kinds) + " |"
        rows = [head, "|" + " --- |" * (2 + len(kinds))]
        for name, v in sorted(self.mrr.items(), key=lambda kv: -kv[1]):
            cells = " | ".join(f"{self.mrr_by_kind[k].get(name, float('nan')):.3f}" for k in kinds)
            mark = " (chosen)" if name == self.chosen else ""
            rows.append(f"| {name}{mark} | {v:.3f} | {cells} |")
        return "\n".join(rows)


def _features(
    groups: list[Group],
    defs: list[Definition],
    bm25: BM25,
    emb: np.ndarray,
    encode: Callable,
    ce_scores: np.ndarray,
) -> dict[str, np.ndarray]:
    q_emb = encode([g.query for g in groups])
    cos: list[float] = []
    lex: list[float] = []
    bm: list[float] = []
    for g, qe in zip(groups, q_emb, strict=True):
        members = [g.positive, *g.negatives[:GROUP_NEGATIVES]]
        cos.extend(emb[members] @ qe)
        lex.extend(rtext.lexical_overlap(g.query, defs[j].text) for j in members)
        bm.extend(bm25.scores(g.query)[members])
    return {"ce": ce_scores, "cos": np.array(cos), "lex": np.array(lex), "bm25": np.array(bm)}


def _pairs(groups: list[Group], defs: list[Definition]) -> list[tuple[str, str]]:
    return [(g.query, defs[j].text) for g in groups for j in [g.positive, *g.negatives[:GROUP_NEGATIVES]]]


def _save(module: object, base: str, blend: Blend, report: TrainReport, out_dir: Path) -> None:
    """Writes next to out_dir, then swaps it in: a crash leaves the previous model whole."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    gated.save(module, base, tmp, report.max_length)
    blend.save(tmp / BLEND_FILE)
    (tmp / "train_report.json").write_text(json.dumps(asdict(report), indent=2) + "\n")
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if out_dir.exists():
        out_dir.rename(old)
    tmp.rename(out_dir)
    shutil.rmtree(old, ignore_errors=True)


def _pool(roots: Sequence[Path], rng: random.Random) -> list[Definition]:
    """The definitions to train and test on: an equal share of MAX_POOL from each root (one large repository
    would crowd out the rest), paths prefixed with the root's place in the list when there are several."""
    share = MAX_POOL // len(roots)
    pool: list[Definition] = []
    for i, root in enumerate(roots):
        found = mine(root)
        rng.shuffle(found)
        for d in found[:share]:
            if len(roots) > 1:
                d.path = f"{i}-{root.name}/{d.path}"
            pool.append(d)
    if len(roots) > 1:
        rng.shuffle(pool)
    return pool


def train(
    settings: Settings,
    repository: str,
    device: str = "cpu",
    budget_minutes: float = 10.0,
    out_dir: Path | None = None,
    path: Path | None = None,
    max_steps: int = 1_000_000,
    paths: Sequence[Path] = (),
) -> TrainReport:
    """Mines pairs from the source under `path` (or `repository` when it is a directory; or every folder of
    `paths`), fine-tunes, fits the blend, evaluates on held-out files and saves to out_dir (default: the data
    directory's model)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    t0 = time.monotonic()
    deadline_all = t0 + budget_minutes * 60
    roots = [Path(p) for p in paths] if paths else [Path(path) if path is not None else Path(repository)]
    for root in roots:
        if not root.is_dir():
            raise ValueError(
                f"no source directory {str(root)!r} for repository {repository!r}: pass --path DIR"
            )
    out = out_dir if out_dir is not None else trained_model_dir(settings)
    if device == "cpu":
        configure_torch_threads(settings.torch_threads)
    rng = random.Random(SEED)

    defs = _pool(roots, rng)
    where = ", ".join(str(r) for r in roots)
    if len(defs) < 4 * (GROUP_NEGATIVES + 1):
        raise ValueError(f"only {len(defs)} documented definitions under {where}; too few to train on")
    base = model_path(BASE_MODEL)
    module = gated.new_module(base, device)
    encoder = gated.PairEncoder(Path(base), MAX_LENGTH)
    count = encoder.count
    for d in defs:
        code = d.full_code if keeps_sentence(d) else d.code
        d.text = rtext.candidate_text(QUERY_TOKEN_RESERVE, d.path, d.breadcrumb, code, (), MAX_LENGTH, count)
    log.info("mined %d definitions in %.1fs", len(defs), time.monotonic() - t0)

    bi = SentenceTransformer(base, device=device, local_files_only=True)
    bi.max_seq_length = MAX_LENGTH

    def encode(texts: list[str]) -> np.ndarray:
        return bi.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)

    emb = encode([d.text for d in defs])
    bm25 = BM25([d.text for d in defs])
    log.info("embedded the pool in %.1fs", time.monotonic() - t0)
    by_split: dict[str, list[int]] = {"train": [], "blend": [], "test": []}
    for i, d in enumerate(defs):
        by_split[split_of(d.path)].append(i)
    train_groups = groups(defs, by_split["train"], bm25, emb, encode)
    blend_groups = groups(defs, by_split["blend"], bm25, emb, encode)[:MAX_BLEND_GROUPS]
    test_groups = groups(defs, by_split["test"], bm25, emb, encode)[:MAX_TEST_GROUPS]
    log.info("groups: %d train, %d blend, %d test", len(train_groups), len(blend_groups), len(test_groups))

    # Reserve time for scoring the blend and test groups, measured on one batch.
    eval_pairs = _pairs(blend_groups, defs) + _pairs(test_groups, defs)
    t = time.monotonic()
    score_pairs(module, encoder, eval_pairs[:32])
    reserve = (time.monotonic() - t) / 32 * len(eval_pairs) * 1.2 + 10
    deadline = deadline_all - reserve
    use_ce = deadline - time.monotonic() >= MIN_CE_TRAIN_S
    if not use_ce:
        log.warning(
            "budget too small for the cross-encoder: %.0fs left, scoring needs ~%.0fs; fitting the blend without it",
            deadline_all - time.monotonic(),
            reserve,
        )

    order = list(range(len(train_groups)))

    def batches(step: int) -> list[tuple[str, list[str]]]:
        items = []
        for k in range(GROUPS_PER_STEP):
            pos = step * GROUPS_PER_STEP + k
            if pos % len(order) == 0:
                rng.shuffle(order)
            g = train_groups[order[pos % len(order)]]
            negs = rng.sample(g.negatives[:HARD_POOL], TRAIN_NEGATIVES)
            items.append((g.query, [defs[g.positive].text, *(defs[j].text for j in negs)]))
        return items

    t_train = time.monotonic()
    steps = train_gated(module, encoder, batches, deadline, max_steps) if use_ce else 0
    train_seconds = time.monotonic() - t_train
    log.info("trained %d steps in %.1fs", steps, train_seconds)

    size = GROUP_NEGATIVES + 1
    no_ce = np.zeros(len(eval_pairs))
    ce_all = score_pairs(module, encoder, eval_pairs) if use_ce else no_ce
    n_blend = len(blend_groups) * size
    f_blend = _features(blend_groups, defs, bm25, emb, encode, ce_all[:n_blend])
    f_test = _features(test_groups, defs, bm25, emb, encode, ce_all[n_blend:])
    y = np.tile(np.array([1.0] + [0.0] * GROUP_NEGATIVES), len(blend_groups))

    fitted: dict[str, tuple[tuple[str, ...], np.ndarray, float, float]] = {}
    for feats in BLEND_CANDIDATES:
        if "ce" in feats and not use_ce:
            continue
        w, b = fit_logistic(np.stack([f_blend[f] for f in feats], axis=1), y)
        fit_mrr = mrr(np.stack([f_blend[f] for f in feats], axis=1) @ w, size)
        fitted["blend(" + "+".join(feats) + ")"] = (feats, w, b, fit_mrr)
    servable = [v for v in fitted.values() if CHOSEN_BLENDS_NEED in v[0]]
    without_cos = [v for v in servable if "cos" not in v[0]]
    with_cos = [v for v in servable if "cos" in v[0]]
    chosen = max(with_cos or without_cos, key=lambda v: v[3])
    if without_cos and with_cos:
        best_without = max(without_cos, key=lambda v: v[3])
        chosen = chosen if chosen[3] >= best_without[3] + MIN_COS_GAIN else best_without
    chosen_name = next(k for k, v in fitted.items() if v is chosen)

    kinds = sorted({g.kind for g in test_groups})
    kind_mask = {k: np.repeat(np.array([g.kind == k for g in test_groups]), size) for k in kinds}
    scorers = {
        "first-stage BM25": f_test["bm25"],
        "bi-encoder cosine": f_test["cos"],
        "fused BM25 + bi-encoder (RRF)": fused(f_test["bm25"], f_test["cos"], size),
        "lexical overlap": f_test["lex"],
    }
    if use_ce:
        scorers["cross-encoder alone"] = f_test["ce"]
    for name, (feats, w, _b, _m) in fitted.items():
        scorers[name] = np.stack([f_test[f] for f in feats], axis=1) @ w
    feats, w, b, _ = chosen
    blend = Blend(
        weights={f: float(x) for f, x in zip(feats, w, strict=True)},
        bias=b,
        bi_encoder=BASE_MODEL if "cos" in feats else "",
        extra={"max_length": MAX_LENGTH, "base_model": BASE_MODEL},
    )
    report = TrainReport(
        repository=repository,
        path=where,
        device=device,
        definitions=len(defs),
        train_queries=len(train_groups),
        blend_groups=len(blend_groups),
        test_groups=len(test_groups),
        steps=steps,
        pairs_trained=steps * GROUPS_PER_STEP * (TRAIN_NEGATIVES + 1),
        train_seconds=round(train_seconds, 1),
        max_length=MAX_LENGTH,
        chosen=chosen_name,
        weights=blend.weights,
        bias=b,
        mrr={k: round(mrr(v, size), 4) for k, v in scorers.items()},
        mrr_by_kind={k: {n: round(mrr(v[kind_mask[k]], size), 4) for n, v in scorers.items()} for k in kinds},
        out_dir=str(out),
    )
    report.elapsed_seconds = round(time.monotonic() - t0, 1)
    _save(module, base, blend, report, out)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="codesearch reranker train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default="", help="repository name (or its source directory)")
    ap.add_argument(
        "--path",
        type=Path,
        action="append",
        default=[],
        help="source directory to mine (default: --repo); repeat it to train on several repositories",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--budget-minutes", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=None, help="model directory (default: the data directory's)")
    ap.add_argument("--max-steps", type=int, default=1_000_000)
    a = ap.parse_args(argv)
    if not a.repo and not a.path:
        ap.error("give --repo or --path")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    name = a.repo or "+".join(p.name for p in a.path)
    try:
        report = train(
            Settings.from_env(), name, a.device, a.budget_minutes, a.out, None, a.max_steps, paths=a.path
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(report.table())
    print(json.dumps({k: v for k, v in asdict(report).items() if k not in ("mrr", "mrr_by_kind")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
