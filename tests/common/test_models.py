"""The shared model plumbing (common/models): lookup, pooling modes, and keeping library noise quiet."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest
from codesearch.common.models.encoder import UnsupportedModel, pooling_mode
from codesearch.common.models.lookup import resolve_model_path
from codesearch.common.models.quiet import quiet_libraries


def test_unsupported_pooling_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_max_tokens": true}')
    with pytest.raises(UnsupportedModel, match="torch backend"):
        pooling_mode(str(tmp_path))
    assert pooling_mode(str(tmp_path / "missing")) == "mean"


def test_lookup_names_the_places_it_looked(tmp_path: Path) -> None:
    assert resolve_model_path(str(tmp_path)) == (str(tmp_path.resolve()), [str(tmp_path)])
    name, looked = resolve_model_path("no-such/model")
    assert name == "no-such/model" and any("Hugging Face cache" in p for p in looked)


def test_quiet_libraries_silences_warnings_and_restores_log_levels() -> None:
    logging.getLogger("transformers").setLevel(logging.INFO)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with quiet_libraries():
            warnings.warn("a tracer warning", UserWarning, stacklevel=1)
            assert logging.getLogger("transformers").level == logging.ERROR
        assert not caught
    assert logging.getLogger("transformers").level == logging.INFO
