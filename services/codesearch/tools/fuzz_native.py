"""atheris harness for the native entry points (trigram search/build, code_tokens, fuse).

    python3 -m codesearch.tools.fuzz_native --runs 20000

A Python exception other than ValueError (the documented "bad pattern/argument" error), a panic surfacing as
pyo3's PanicException, or a crash of the process is a finding. The Rust code is not built with coverage
instrumentation, so atheris is guided by the Python side only: this is a bounded random fuzz of the
native inputs, not coverage-guided exploration of the Rust code.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

DEFAULT_RUNS = 10_000  # about a minute on one busy core
MAX_LIMIT = 500  # a search limit the keyword leg could ask for
MAX_INPUT_BYTES = 2048  # room for long patterns and several files per input
CORPUS_FILES = {
    "a.py": b"def parse(x):\n    return x * 2  # aaaa aaab\n\nparse('aaaaaaaaaaaaaaaaaaaaaaaac')\n",
    "b.go": 'package b\n\nfunc Run() { fmt.Println("h\u00e9llo w\u00f6rld") }\n'.encode(),
    "c.txt": ("\u202e mixed \u01c5 unicode \U0001d518 \ufeff line\n" * 20).encode(),
    "d.bin": bytes(range(256)),
}


def main(argv: list[str] | None = None) -> int:
    import atheris

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    args, rest = parser.parse_known_args(argv)

    with atheris.instrument_imports():
        from codesearch import _native

    tmp = Path(tempfile.mkdtemp(prefix="fuzz-native-"))
    (tmp / "base").mkdir()
    index = _native.TrigramIndex.build(str(tmp / "base"), list(CORPUS_FILES.items()))
    counter = {"inputs": 0, "value_errors": 0, "builds": 0}

    def one_input(data: bytes) -> None:
        counter["inputs"] += 1
        fdp = atheris.FuzzedDataProvider(data)
        choice = fdp.ConsumeIntInRange(0, 9)
        try:
            if choice <= 5:
                pattern = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 300))
                index.search(
                    pattern, fdp.ConsumeBool(), fdp.ConsumeBool(), fdp.ConsumeIntInRange(0, MAX_LIMIT)
                )
            elif choice <= 7:
                _native.code_tokens(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 500)))
            elif choice == 8:
                lists = [
                    [fdp.ConsumeUnicodeNoSurrogates(4) for _ in range(fdp.ConsumeIntInRange(0, 8))]
                    for _ in range(fdp.ConsumeIntInRange(0, 4))
                ]
                weights = [fdp.ConsumeRegularFloat() for _ in range(fdp.ConsumeIntInRange(0, 5))]
                _native.fuse(lists, weights, fdp.ConsumeRegularFloat())
            else:
                counter["builds"] += 1
                out = tmp / f"b{counter['builds'] % 4}"
                if out.exists():
                    for f in out.iterdir():
                        f.unlink()
                else:
                    out.mkdir()
                files = [
                    (
                        fdp.ConsumeUnicodeNoSurrogates(12) or "x",
                        fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 400)),
                    )
                    for _ in range(fdp.ConsumeIntInRange(0, 4))
                ]
                built = _native.TrigramIndex.build(str(out), files, index, ["a.py"])
                built.search(fdp.ConsumeUnicodeNoSurrogates(8) or "a", False, False, 10)
        except ValueError:
            counter["value_errors"] += 1

    # libFuzzer prints 'Done N runs' and exits the process itself; a crash stops it with a report.
    # Full-length inputs from the start: without Rust coverage, libFuzzer's length control would stay tiny.
    flags = [f"-runs={args.runs}", f"-max_len={MAX_INPUT_BYTES}", "-len_control=0"]
    atheris.Setup([sys.argv[0], *flags, *rest], atheris.instrument_func(one_input))
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
