"""Every constant that shapes an answer, read from the modules that define it: the query cache's configuration key.

Each tuning constant lives beside the measurement that chose it, in the module of its concept (ranking/, plan.py,
router.py, rerank_stage.py, expansion.py). This module finds them all (every upper-case module-level value), so a
constant added or changed in any of them changes `CONFIG_FINGERPRINT`, and the cache stops serving answers the
new configuration would not give. Only the modules are listed here, never the constants.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

from codesearch.orchestrator import expansion, plan, ranking, rerank_stage, router


def tuned_modules() -> list[ModuleType]:
    """The modules whose constants decide an answer: every module of ranking/ (present and future) and the
    planning, routing, expansion and rerank modules."""
    found = [
        importlib.import_module(f"{ranking.__name__}.{m.name}")
        for m in pkgutil.iter_modules(ranking.__path__)
    ]
    return [router, plan, expansion, rerank_stage, *sorted(found, key=lambda m: m.__name__)]


def constants(module: ModuleType) -> dict[str, object]:
    """The module's upper-case values (imported ones too: a duplicate does not change what the key tells apart)."""
    return {
        name: value
        for name, value in vars(module).items()
        if name.isupper() and not isinstance(value, ModuleType) and not callable(value)
    }


def canonical(value: object) -> object:
    """A form whose repr does not depend on set or dict order."""
    if isinstance(value, dict):
        return sorted((repr(canonical(k)), canonical(v)) for k, v in value.items())
    if isinstance(value, (set, frozenset)):
        return sorted(repr(canonical(v)) for v in value)
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, re.Pattern):
        return (value.pattern, value.flags)
    return value


def fingerprint(modules: list[ModuleType] | None = None) -> str:
    """repr of every tuned constant, by module and name."""
    return repr(
        sorted(
            (f"{m.__name__}.{name}", repr(canonical(value)))
            for m in (modules if modules is not None else tuned_modules())
            for name, value in constants(m).items()
        )
    )


CONFIG_FINGERPRINT = fingerprint()
