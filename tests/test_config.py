"""Settings from the environment: numbers that cannot be used are a plain error naming the variable."""

from __future__ import annotations

import pytest
from codesearch.cli.main import main
from codesearch.config import ConfigError, Settings


@pytest.mark.parametrize(
    ("name", "bad", "says"),
    [
        ("CODESEARCH_MAX_FILE_BYTES", "1MB", "must be a whole number, got '1MB'"),
        ("CODESEARCH_TORCH_THREADS", "2.5", "must be a whole number, got '2.5'"),
        ("CODESEARCH_STATIC_QUERY_WEIGHT", "half", "must be a number, got 'half'"),
    ],
)
def test_a_number_that_is_not_one_names_its_variable(name: str, bad: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"{name} {says}"):
        Settings.from_env({name: bad})


def test_numbers_read_and_blank_means_the_default() -> None:
    s = Settings.from_env({"CODESEARCH_MAX_FILE_BYTES": " 2048 ", "CODESEARCH_TORCH_THREADS": "3"})
    assert (s.max_file_bytes, s.torch_threads) == (2048, 3)
    blank = Settings.from_env({"CODESEARCH_STATIC_QUERY_WEIGHT": " ", "CODESEARCH_MAX_FILE_BYTES": ""})
    default = Settings.from_env({})
    assert (blank.static_query_weight, blank.max_file_bytes) == (
        default.static_query_weight,
        default.max_file_bytes,
    )


def test_the_cli_prints_it_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODESEARCH_MAX_FILE_BYTES", "lots")
    assert main(["status"]) != 0
    err = capsys.readouterr().err
    assert "CODESEARCH_MAX_FILE_BYTES must be a whole number, got 'lots'" in err and "Traceback" not in err
