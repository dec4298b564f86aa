"""Word stems at the keyword leg: asked only as a fallback, through a real gRPC server, and old indexes upgraded."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import tantivy
from codesearch import _native
from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.keyword import bm25
from codesearch.keyword.bm25 import Bm25Reader, ChunkDoc
from codesearch.keyword.store import apply_batch
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc

from tests.fixture_types import KeywordRepo
from tests.keyword.test_store_incremental import indexed

# The words of "signing cookies" as written stand in two files, never together; their stems ("sign", "cooki")
# meet in session.py.
REPO = {
    "session.py": "def sign_cookie(cookie, key):\n    # the cookie is signed with the key\n    return mac(cookie, key)\n",
    "helpers.py": "def jar(cookies):\n    return list(cookies)\n",
    "keys.py": "def signing_key():\n    return KEY\n",
}
QUESTION = "signing cookies"


def ask(
    stub: keyword_pb2_grpc.KeywordServiceStub, query: str, stem_below: float
) -> keyword_pb2.KeywordSearchResponse:
    request = keyword_pb2.KeywordSearchRequest(query=query, limit=10, stem_below_coverage=stem_below)
    return stub.KeywordSearch(request)


def test_stems_answer_when_the_words_as_written_do_not_meet(keyword_repo: KeywordRepo) -> None:
    stub = keyword_repo(REPO)
    as_written = ask(stub, QUESTION, 0.0)
    assert not as_written.stemmed and "session.py" not in [h.location.path for h in as_written.hits]
    stemmed = ask(stub, QUESTION, 0.9)
    assert stemmed.stemmed and stemmed.hits[0].location.path == "session.py"


def test_stems_that_bring_no_more_words_together_leave_the_answer_as_written(
    keyword_repo: KeywordRepo,
) -> None:
    stub = keyword_repo(REPO)
    response = ask(stub, "cookies zebra", 0.9)  # "zebra" is nowhere: stems find what the words found, half
    assert not response.stemmed and response == ask(stub, "cookies zebra", 0.0)


def test_words_that_meet_as_written_keep_their_answer(keyword_repo: KeywordRepo) -> None:
    stub = keyword_repo(REPO)
    response = ask(stub, "cookie signed key", 0.9)  # every word stands in session.py's chunk
    assert not response.stemmed and response.hits[0].location.path == "session.py"
    assert response == ask(stub, "cookie signed key", 0.0)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_a_bad_stem_share_is_an_invalid_argument(keyword_repo: KeywordRepo, bad: float) -> None:
    stub = keyword_repo(REPO)
    with pytest.raises(grpc.RpcError) as e:
        ask(stub, QUESTION, bad)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "stem_below_coverage" in str(e.value.details())


def write_old_index(path: Path, docs: list[ChunkDoc]) -> None:
    """An index as written before the stemmed fields: the same schema without them."""
    b = tantivy.SchemaBuilder()
    b.add_text_field("path", stored=True, tokenizer_name="raw")
    b.add_text_field("path_tokens", stored=False, tokenizer_name=bm25.TOKENIZER)
    b.add_text_field("language", stored=True, tokenizer_name="raw")
    b.add_integer_field("start_line", stored=True)
    b.add_integer_field("end_line", stored=True)
    b.add_text_field("body", stored=False, tokenizer_name=bm25.TOKENIZER)
    b.add_text_field("symbol_tokens", stored=False, tokenizer_name=bm25.TOKENIZER)
    b.add_bytes_field("text", stored=True, indexed=False)
    b.add_text_field("symbol", stored=True, tokenizer_name="raw")
    b.add_text_field("breadcrumb", stored=True, tokenizer_name="raw")
    path.mkdir(parents=True)
    index = tantivy.Index(b.build(), path=str(path))
    index.register_tokenizer(bm25.TOKENIZER, bm25._analyzer())
    writer = index.writer(heap_size=bm25.WRITER_HEAP_BYTES, num_threads=1)
    for d in docs:
        writer.add_document(
            tantivy.Document(
                path=d.path,
                path_tokens=d.path.replace("/", " ").replace(".", " "),
                language=d.language,
                start_line=d.start_line,
                end_line=d.end_line,
                body=_native.code_tokens_joined([d.text])[0],
                symbol_tokens="",
                text=d.text.encode(),
                symbol=d.symbol,
                breadcrumb="",
            )
        )
    writer.commit()
    writer.wait_merging_threads()


def test_an_index_without_stems_answers_as_written_and_is_upgraded_on_its_next_update(tmp_path: Path) -> None:
    snapdir = SnapshotDir(tmp_path / "repo")
    apply_batch(snapdir, IndexBatch("repo", True, 1, [indexed(p, t) for p, t in REPO.items()]))
    docs = [ChunkDoc(p, 1, t.count("\n") + 1, "python", t, "", ()) for p, t in REPO.items()]
    old = tmp_path / "old-bm25"
    write_old_index(old, docs)
    reader = Bm25Reader(old)
    assert not reader.has_stems
    assert reader.search(QUESTION, 10, [], stemmed=True) == reader.search(QUESTION, 10, [])

    # The next generation on top of it: the old chunks are rewritten with stems, the edited file replaced.
    new = tmp_path / "new-bm25"
    edited = ChunkDoc("helpers.py", 1, 2, "python", "def jar(cookies):\n    return cookies\n", "jar", ())
    assert bm25.write(new, old, [edited], {"helpers.py"}) == len(REPO)
    upgraded = Bm25Reader(new)
    assert upgraded.has_stems
    assert {(d.path, d.text) for d in upgraded.all_docs()} == {
        ("session.py", REPO["session.py"]),
        ("keys.py", REPO["keys.py"]),
        ("helpers.py", edited.text),
    }
    assert upgraded.search(QUESTION, 10, [], stemmed=True)[0].doc.path == "session.py"
