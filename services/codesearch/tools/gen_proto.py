"""Generates the protobuf and gRPC Python code for proto/codesearch/v1 into services/codesearch/v1.

Run `python -m codesearch.tools.gen_proto` from the repository root after changing a .proto file;
tests/tools/test_proto_fresh.py fails while the committed code is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
PROTO_ROOT = REPO_ROOT / "proto"
PROTO_DIR = PROTO_ROOT / "codesearch" / "v1"


def generate(out_dir: Path) -> list[Path]:
    """Writes *_pb2.py, *_pb2.pyi and *_pb2_grpc.py for every proto file under out_dir."""
    from grpc_tools import protoc  # dev dependency only

    protos = sorted(PROTO_DIR.glob("*.proto"))
    out_dir.mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *[str(p) for p in protos],
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed")
    package_dir = out_dir / "codesearch" / "v1"
    (package_dir / "__init__.py").write_text('"""Generated protobuf and gRPC code for codesearch.v1."""\n')
    return sorted(package_dir.iterdir())


def main() -> int:
    generate(REPO_ROOT / "services")
    print(f"generated into {REPO_ROOT / 'services' / 'codesearch' / 'v1'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
