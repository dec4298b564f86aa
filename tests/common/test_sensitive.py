"""Which roots are refused as system directories: the operating system's, never a home directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from codesearch.common.errors import ServiceError
from codesearch.common.sensitive import check_not_system_dir


@pytest.mark.parametrize("root", ["/", "/etc", "/etc/ssl", "/proc/1", "/var/lib/docker", "/var"])
def test_system_directories_and_their_parents_are_refused(root: str) -> None:
    with pytest.raises(ServiceError, match="system directory"):
        check_not_system_dir(Path(root), ())


@pytest.mark.parametrize(
    "root", ["/root/src/project", "/root/.pyenv/versions/3.11.7/lib/python3.11", "/home/a/b"]
)
def test_home_directories_are_not_system_directories(root: str) -> None:
    check_not_system_dir(Path(root), ())  # the demo indexes root's own Python under /root/.pyenv


def test_an_allowed_root_covers_a_system_directory() -> None:
    check_not_system_dir(Path("/etc/myapp"), (Path("/etc"),))
