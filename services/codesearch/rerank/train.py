"""Self-supervised fine-tuning of the reranker on a repository's own source (`codesearch reranker train`).

Pairs are mined from the code: a docstring's first sentence -> its definition (half of them with that sentence
removed, so the task is not copying), and an identifier -> its definition. Hard negatives are the other definitions BM25 or the bi-encoder rank highest.
The reranker is a gated cross-encoder (rerank/gated.py) made from the bundled all-MiniLM-L6-v2 bi-encoder: it
starts as exactly that bi-encoder and is trained with a listwise loss, embeddings and lower layers frozen (CPU
budget). Then a logistic blend of its score, the bi-encoder cosine and the lexical overlap is fit on a
held-apart split of files, so its scores are calibrated probabilities. Files are split three ways (train /
blend fit / test); the report gives held-out MRR of every scorer on the test files, the first-stage BM25,
bi-encoder and their fused order (reciprocal rank fusion) among them.

    python -m codesearch.rerank.train --path DIR [--repo NAME] [--budget-minutes 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import logging
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from codesearch.common.models.lookup import model_path
from codesearch.common.models.threads import configure_torch_threads
from codesearch.common.text import subwords
from codesearch.common.walker import is_hidden, walk
from codesearch.config import DEFAULT_MAX_FILE_BYTES, Settings
from codesearch.rerank import gated
from codesearch.rerank import text as rtext
from codesearch.rerank.model import BLEND_FILE, Blend, trained_model_dir

log = logging.getLogger(__name__)

# Bundled offline; its transformer seeds the cross-encoder and gives the cosine.
BASE_MODEL = "all-MiniLM-L6-v2"
MAX_LENGTH = 128  # bench.py: 256 tokens doubles the cost of every step and scoring call
QUERY_TOKEN_RESERVE = 24  # room left for the query when trimming candidates (most queries are shorter)
# Definitions embedded and searched for negatives; bounds the bi-encoder pass to ~1-3 min of CPU.
MAX_POOL = 800
MIN_QUERY_WORDS = 3  # shorter first sentences ("Return x.") say too little to be a query
MAX_QUERY_WORDS = 40  # longer ones are paragraphs, not questions
# Definitions the models read with the query sentence left in. Searched code carries its docstrings; when every
# positive lost its sentence while BM25-mined negatives kept their overlap, the model learned that sharing the
# query's words means wrong (dev concept MRR@10 0.967 -> 0.933 when reranked, measured).
KEEP_SENTENCE_SHARE = 0.5
IDENT_SHARE = 0.2  # share of queries that are an identifier instead of a sentence (definition lookups)
TEST_SHARE = 0.2  # files held out for the final table
BLEND_SHARE = 0.15  # files held apart to fit the blend: scores on training pairs are overconfident
MAX_TEST_GROUPS = 100  # 100 x 20 pairs: ~1-4 min of contended CPU scoring; MRR within ~+-0.05
MAX_BLEND_GROUPS = 60  # 60 x 20 pairs: plenty for 2-3 weights
GROUP_NEGATIVES = 19  # held-out groups are 1 right + 19 wrong, as in the earlier baseline
HARD_POOL = 15  # training negatives are sampled from this many hardest per query
TRAIN_NEGATIVES = 3  # per query per step: more queries per step beat more negatives per query at this budget
GROUPS_PER_STEP = 8  # 8 x (1 + 3) = 32 pairs a step
FROZEN_LAYERS = 3  # of 6: backward through the top half only, ~1/3 less time a step; embeddings frozen too
# The gated model starts as a trained bi-encoder: gentle, yet ~150 steps move it (held-out MRR 0.75 -> 0.82).
ENCODER_LR = 5e-5
GATE_LR = 5e-2  # the gate and the loss temperature are single scalars that must move in a few hundred steps
INITIAL_TEMPERATURE = 20.0  # cosines span ~0.3 within a group: x20 gives the listwise softmax a usable spread
CE_ENCODER_LR = 1e-4  # a plain cross-encoder (train_cross_encoder, tests): higher than the usual 2e-5
CE_HEAD_LR = 2e-3  # its fresh head must move fast
WARMUP_STEPS = 10  # keeps the first large gradients from wrecking the encoder
RRF_K = 60  # the fused order in the report: the usual reciprocal rank fusion constant
MIN_COS_GAIN = (
    0.01  # a blend that needs the bi-encoder (twice the latency) must beat the best one without it by this
)
BM25_K1, BM25_B = 1.2, 0.75  # textbook BM25 parameters
L2 = 1e-2  # ridge for the logistic blend; the features are few and on similar scales
# Fewer seconds of training than this barely move the model (~3 s a step on 2 cores); the cross-encoder is then
# neither trained nor scored, and the blend is fit without it.
MIN_CE_TRAIN_S = 120.0
SEED = 13

BLEND_CANDIDATES: tuple[tuple[str, ...], ...] = (
    ("ce",),
    ("ce", "lex"),
    ("cos", "lex"),
    ("ce", "cos"),
    ("ce", "cos", "lex"),
)
# Every blend served keeps the lexical overlap, whatever the mined split prefers: it costs nothing, and reranking
# the search's fused top 20 (dev set, auto) measured ce -> ce+lex concept MRR@10 0.954 -> 0.982 and paraphrases
# 0.264 / 0.247 -> 0.271 / 0.281 (tune / check). The mined groups, where no positive shares more words with its
# query than the BM25-mined negatives do, cannot show this.
CHOSEN_BLENDS_NEED = "lex"


@dataclass
class Definition:
    path: str
    breadcrumb: list[str]
    name: str
    sentence: str
    code: str  # the definition with the query sentence removed
    full_code: str = ""  # the definition as written
    text: str = ""  # what the models read: header + trimmed code


@dataclass
class Group:
    query: str
    kind: str  # "doc" or "ident"
    positive: int
    negatives: list[int]


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


# ---------------------------------------------------------------- mining


def first_sentence(doc: str) -> str:
    para = doc.strip().split("\n\n")[0]
    para = " ".join(para.split())
    m = re.search(r"(?<=[.!?])\s", para)
    return (para[: m.start()] if m else para).strip()


def _strip_sentence(lines: list[str], doc_node: ast.Expr, start: int, doc: str, sentence: str) -> list[str]:
    """The definition's lines with the docstring replaced by the docstring minus its first sentence."""
    n = len(sentence.split())
    m = re.match(r"\s*(?:\S+\s+){" + str(n - 1) + r"}\S+", doc)
    rest = doc[m.end() :].strip() if m else doc.strip()
    a, b = doc_node.lineno - 1 - start, (doc_node.end_lineno or doc_node.lineno) - start
    indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
    new = [f'{indent}"""{rest}"""'] if rest else []
    return lines[:a] + new + lines[b:]


def mine_python_file(root: Path, file: Path) -> list[Definition]:
    try:
        source = file.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    rel = file.relative_to(root).as_posix()
    out: list[Definition] = []

    def visit(node: ast.AST, crumbs: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                doc = ast.get_docstring(child, clean=True)
                body0 = child.body[0] if child.body else None
                if doc and isinstance(body0, ast.Expr):
                    sentence = first_sentence(doc)
                    n_words = len(sentence.split())
                    start = child.lineno - 1
                    code_lines = lines[start : child.end_lineno]
                    if MIN_QUERY_WORDS <= n_words <= MAX_QUERY_WORDS and len(code_lines) >= 3:
                        code = "\n".join(_strip_sentence(code_lines, body0, start, doc, sentence))
                        full = "\n".join(code_lines)
                        out.append(
                            Definition(rel, list(crumbs), child.name, sentence.rstrip("."), code, full)
                        )
                visit(child, [*crumbs, child.name])

    visit(tree, [])
    return out


def mine(root: Path) -> list[Definition]:
    """Definitions with a usable docstring under root (Python files, via `ast`)."""
    found: list[Definition] = []
    for f in walk(root, DEFAULT_MAX_FILE_BYTES).files:  # the files the indexer would index
        if f.rel_path.endswith(".py") and not is_hidden(f.rel_path):
            found.extend(mine_python_file(root, root / f.rel_path))
    return found


def keeps_sentence(d: Definition) -> bool:
    """Whether the models read this definition with its docstring whole (stable per definition)."""
    h = int(hashlib.sha1(f"{d.path}:{d.name}".encode()).hexdigest()[8:16], 16) / 0xFFFFFFFF
    return h < KEEP_SENTENCE_SHARE


def split_of(path: str) -> str:
    """train / blend / test by a hash of the file path: no file contributes to two splits."""
    h = int(hashlib.sha1(path.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if h < TEST_SHARE else "blend" if h < TEST_SHARE + BLEND_SHARE else "train"


# ---------------------------------------------------------------- first-stage scorers


def _terms(text: str) -> list[str]:
    return subwords(text)


class BM25:
    """BM25 over the pool's texts as a sparse matrix: scores(query) is one sparse mat-vec."""

    def __init__(self, texts: Sequence[str]) -> None:
        from scipy import sparse

        self.vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.zeros(len(texts))
        for i, t in enumerate(texts):
            terms = _terms(t)
            lengths[i] = len(terms)
            counts: dict[int, int] = {}
            for w in terms:
                j = self.vocab.setdefault(w, len(self.vocab))
                counts[j] = counts.get(j, 0) + 1
            rows += [i] * len(counts)
            cols += list(counts)
            vals += list(counts.values())
        tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(self.vocab)), dtype=np.float64)
        df = np.bincount(tf.indices, minlength=len(self.vocab))
        idf = np.log(1 + (len(texts) - df + 0.5) / (df + 0.5))
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / max(lengths.mean(), 1.0))
        tf = tf.tocoo()
        w = idf[tf.col] * tf.data * (BM25_K1 + 1) / (tf.data + norm[tf.row])
        self.matrix = sparse.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape)

    def scores(self, query: str) -> np.ndarray:
        q = np.zeros(len(self.vocab))
        for w in set(_terms(query)):
            j = self.vocab.get(w)
            if j is not None:
                q[j] = 1.0
        return self.matrix @ q


# ---------------------------------------------------------------- cross-encoder


def score_pairs(
    module: object, encoder: gated.PairEncoder, pairs: Sequence[tuple[str, str]], batch: int = 32
) -> np.ndarray:
    """Gated cross-encoder scores (cosines) for pairs, batched by length."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))
    out = np.empty(len(pairs))
    module.eval()  # type: ignore[attr-defined]
    for k in range(0, len(order), batch):
        idx = order[k : k + batch]
        out[idx] = gated.torch_scores(module, encoder.encode([pairs[i] for i in idx]))
    return out


def new_cross_encoder(max_length: int, device: str) -> object:
    """A plain sentence-transformers CrossEncoder from the bundled MiniLM with a fresh 1-logit head."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(
        model_path(BASE_MODEL),
        num_labels=1,
        max_length=max_length,
        device=device,
        local_files_only=True,
    )


Items = list[tuple[str, list[str]]]  # a step's groups: (query, [positive, *negatives])


def train_steps(
    bert: object,
    groups: list[dict[str, object]],
    logits_of: Callable[[Items], object],
    batches: Callable[[int], Items],
    deadline: float,
    max_steps: int,
) -> int:
    """Listwise training until the deadline or max_steps; returns the number of steps taken.

    `bert`'s embeddings and lower FROZEN_LAYERS are frozen; `groups` are optimiser parameter groups;
    logits_of(items) gives a (len(items), width) tensor whose column 0 is each positive.
    """
    import torch

    for p in bert.embeddings.parameters():  # type: ignore[attr-defined]
        p.requires_grad = False
    for layer in bert.encoder.layer[:FROZEN_LAYERS]:  # type: ignore[attr-defined]
        for p in layer.parameters():
            p.requires_grad = False
    params = [p for g in groups for p in g["params"]]  # type: ignore[attr-defined]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP_STEPS))
    step = 0
    while step < max_steps and time.monotonic() < deadline:
        items = batches(step)
        logits = logits_of(items)
        target = torch.zeros(len(items), dtype=torch.long, device=logits.device)  # type: ignore[attr-defined]
        loss = torch.nn.functional.cross_entropy(logits, target)  # type: ignore[arg-type]
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        step += 1
        if step % 10 == 0:
            log.info("step %d loss %.3f", step, loss.item())
    return step


def train_gated(
    module: object,
    encoder: gated.PairEncoder,
    batches: Callable[[int], Items],
    deadline: float,
    max_steps: int,
) -> int:
    """Trains a gated cross-encoder (rerank/gated.py); the temperature is for the loss only."""
    import torch

    device = next(module.parameters()).device  # type: ignore[attr-defined]
    temperature = torch.nn.Parameter(torch.tensor(INITIAL_TEMPERATURE, device=device))

    def logits_of(items: Items) -> torch.Tensor:
        width = len(items[0][1])
        batch = encoder.encode([(q, t) for q, texts in items for t in texts])
        cos = module(**{k: torch.from_numpy(v).to(device) for k, v in batch.items()})  # type: ignore[operator]
        return (cos * temperature).view(len(items), width)

    body = [p for n, p in module.bert.named_parameters() if _trainable(n)]  # type: ignore[attr-defined]
    groups = [
        {"params": body, "lr": ENCODER_LR},
        {"params": [module.gate, temperature], "lr": GATE_LR, "weight_decay": 0.0},  # type: ignore[attr-defined]
    ]
    module.train()  # type: ignore[attr-defined]
    steps = train_steps(module.bert, groups, logits_of, batches, deadline, max_steps)  # type: ignore[attr-defined]
    module.eval()  # type: ignore[attr-defined]
    return steps


def train_cross_encoder(
    ce: object, batches: Callable[[int], Items], deadline: float, max_steps: int, max_length: int
) -> int:
    """Trains a plain sentence-transformers CrossEncoder (its fresh head faster than the encoder)."""
    import torch

    model = ce.model  # type: ignore[attr-defined]
    tokenizer = ce.tokenizer  # type: ignore[attr-defined]

    def logits_of(items: Items) -> torch.Tensor:
        enc = tokenizer(
            [q for q, texts in items for _ in texts],
            [t for _, texts in items for t in texts],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        ).to(model.device)
        return model(**enc).logits.view(len(items), len(items[0][1]))

    named = [(n, p) for n, p in model.named_parameters() if _trainable(n.split(".", 1)[-1])]
    groups = [
        {"params": [p for n, p in named if not n.startswith("classifier")], "lr": CE_ENCODER_LR},
        {"params": [p for n, p in named if n.startswith("classifier")], "lr": CE_HEAD_LR},
    ]
    model.train()
    steps = train_steps(model.base_model, groups, logits_of, batches, deadline, max_steps)
    model.eval()
    return steps


def _trainable(name: str) -> bool:
    """Whether a BERT parameter (named relative to the BertModel) is outside the frozen part."""
    frozen = ("embeddings.", *(f"encoder.layer.{i}." for i in range(FROZEN_LAYERS)))
    return not name.startswith(frozen)


# ---------------------------------------------------------------- blend


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, iters: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (few features): weights, bias, in the raw features' units.

    Fits on standardised features so the ridge shrinks each feature alike (a cosine varies ~0.1 across a
    group, a logit ~5: unscaled, the same ridge would all but erase the cosine).
    """
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    xb = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) / len(y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb / len(y) + np.diag(reg) + 1e-9 * np.eye(len(w))
        delta = np.linalg.solve(hess, grad)
        w -= delta
        if np.abs(delta).max() < 1e-8:
            break
    return w[:-1] / sd, float(w[-1] - (w[:-1] * mu / sd).sum())


def rrf(a: np.ndarray, b: np.ndarray, group_size: int, k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion of two scorers within each group (rows as in `mrr`): what the search fuses."""

    def ranks(x: np.ndarray) -> np.ndarray:
        g = x.reshape(-1, group_size)
        return np.argsort(np.argsort(-g, axis=1, kind="stable"), axis=1) + 1

    return (1.0 / (k + ranks(a)) + 1.0 / (k + ranks(b))).reshape(-1)


def mrr(scores: np.ndarray, group_size: int) -> float:
    """Groups are consecutive rows with the positive first; ties count against the positive."""
    s = scores.reshape(-1, group_size)
    ranks = 1 + (s[:, 1:] >= s[:, :1]).sum(axis=1)
    return float((1.0 / ranks).mean())


# ---------------------------------------------------------------- the whole run


def _groups(
    defs: list[Definition],
    ids: list[int],
    bm25: BM25,
    emb: np.ndarray,
    encode: Callable[[list[str]], np.ndarray],
) -> list[Group]:
    rng = random.Random(SEED)
    queries, kinds = [], []
    for i in ids:
        ident = rng.random() < IDENT_SHARE
        queries.append(defs[i].name if ident else defs[i].sentence)
        kinds.append("ident" if ident else "doc")
    q_emb = encode(queries)
    out: list[Group] = []
    for i, q, kind, qe in zip(ids, queries, kinds, q_emb, strict=True):
        lex_rank = np.argsort(-bm25.scores(q), kind="stable")[: 3 * GROUP_NEGATIVES]
        cos_rank = np.argsort(-(emb @ qe), kind="stable")[: 3 * GROUP_NEGATIVES]
        negs: list[int] = []
        for j in (int(x) for pair in zip(lex_rank, cos_rank, strict=True) for x in pair):
            same = (
                defs[j].sentence == defs[i].sentence
                or defs[j].name == defs[i].name
                or defs[j].code == defs[i].code
            )
            if j != i and j not in negs and not same:
                negs.append(j)
            if len(negs) >= max(GROUP_NEGATIVES, HARD_POOL):
                break
        if len(negs) >= GROUP_NEGATIVES:
            out.append(Group(q, kind, i, negs))
    return out


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


def train(
    settings: Settings,
    repository: str,
    device: str = "cpu",
    budget_minutes: float = 10.0,
    out_dir: Path | None = None,
    path: Path | None = None,
    max_steps: int = 1_000_000,
) -> TrainReport:
    """Mines pairs from the source under `path` (or `repository` when it is a directory), fine-tunes,
    fits the blend, evaluates on held-out files and saves to out_dir (default: the data directory's model)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    t0 = time.monotonic()
    deadline_all = t0 + budget_minutes * 60
    root = Path(path) if path is not None else Path(repository)
    if not root.is_dir():
        raise ValueError(f"no source directory for repository {repository!r}: pass --path DIR")
    out = out_dir if out_dir is not None else trained_model_dir(settings)
    if device == "cpu":
        configure_torch_threads(settings.torch_threads)
    rng = random.Random(SEED)

    defs = mine(root)
    rng.shuffle(defs)
    defs = defs[:MAX_POOL]
    if len(defs) < 4 * (GROUP_NEGATIVES + 1):
        raise ValueError(f"only {len(defs)} documented definitions under {root}; too few to train on")
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
    train_groups = _groups(defs, by_split["train"], bm25, emb, encode)
    blend_groups = _groups(defs, by_split["blend"], bm25, emb, encode)[:MAX_BLEND_GROUPS]
    test_groups = _groups(defs, by_split["test"], bm25, emb, encode)[:MAX_TEST_GROUPS]
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
        "fused BM25 + bi-encoder (RRF)": rrf(f_test["bm25"], f_test["cos"], size),
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
        path=str(root),
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
    ap.add_argument("--path", type=Path, default=None, help="source directory to mine (default: --repo)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--budget-minutes", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=None, help="model directory (default: the data directory's)")
    ap.add_argument("--max-steps", type=int, default=1_000_000)
    a = ap.parse_args(argv)
    if not a.repo and a.path is None:
        ap.error("give --repo or --path")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        report = train(
            Settings.from_env(), a.repo or a.path.name, a.device, a.budget_minutes, a.out, a.path, a.max_steps
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(report.table())
    print(json.dumps({k: v for k, v in asdict(report).items() if k not in ("mrr", "mrr_by_kind")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
