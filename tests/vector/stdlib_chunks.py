"""Real chunks for the static tier's query tests: standard-library functions whose source ships with Python (not
frozen modules such as os), and their source text."""

from __future__ import annotations

import inspect
import json
import shutil
import string
import tempfile
import textwrap
from collections.abc import Callable

FUNCTIONS: list[Callable[..., object]] = [
    tempfile.TemporaryDirectory.cleanup,
    shutil.copyfileobj,
    shutil.which,
    shutil.rmtree,
    json.dumps,
    textwrap.dedent,
    textwrap.wrap,
    string.capwords,
]


def sources() -> list[str]:
    """Each function's source, in FUNCTIONS' order."""
    return [inspect.getsource(f) for f in FUNCTIONS]
