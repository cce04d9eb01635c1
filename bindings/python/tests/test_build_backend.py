"""The in-tree PEP 517 backend (_build/baton_build.py), without pip: the
wheel holds the package and its metadata and nothing else, its RECORD is
right, two builds are the same bytes, the sdist can build the wheel again,
and the pyproject.toml reader used before Python 3.11 reads the file as
tomllib does (and refuses what it cannot read)."""

from __future__ import annotations

import base64
import hashlib
import importlib
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import PACKAGE

sys.path.insert(0, str(PACKAGE / "_build"))
baton_build = importlib.import_module("baton_build")


def package_files() -> set:
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in (PACKAGE / "baton").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def test_wheel_holds_the_package_and_metadata(tmp_path):
    name = baton_build.build_wheel(str(tmp_path))
    version = baton_build.read_pyproject()["project"]["version"]
    assert name == f"baton-{version}-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as zf:
        names = set(zf.namelist())
        info = f"baton-{version}.dist-info"
        assert names == package_files() | {
            f"{info}/METADATA",
            f"{info}/WHEEL",
            f"{info}/RECORD",
        }
        assert "baton/py.typed" in names
        meta = zf.read(f"{info}/METADATA").decode()
        assert f"Name: baton\nVersion: {version}\n" in meta
        assert "Requires-Python: >=3.9" in meta
        assert "Root-Is-Purelib: true" in zf.read(f"{info}/WHEEL").decode()
        # Every file's hash and size, as pip checks them.
        for line in zf.read(f"{info}/RECORD").decode().splitlines():
            path, digest, size = line.split(",")
            if path.endswith("/RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(path)
            raw = hashlib.sha256(data).digest()
            want = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={want}", len(data)), path


def test_two_builds_are_the_same_bytes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = baton_build.build_wheel(str(tmp_path / "a"))
    b = baton_build.build_wheel(str(tmp_path / "b"))
    assert (tmp_path / "a" / a).read_bytes() == (tmp_path / "b" / b).read_bytes()


def test_sdist_has_what_a_wheel_is_built_from(tmp_path):
    name = baton_build.build_sdist(str(tmp_path))
    top = name[: -len(".tar.gz")]
    with tarfile.open(tmp_path / name) as tf:
        names = {m.name[len(top) + 1 :] for m in tf.getmembers()}
    assert {"PKG-INFO", "pyproject.toml", "README.md", "_build/baton_build.py"} <= names
    assert package_files() <= names
    assert not any(n.startswith("tests/") for n in names)


def test_editable_wheel_points_at_the_tree(tmp_path):
    name = baton_build.build_editable(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as zf:
        pth = [n for n in zf.namelist() if n.endswith(".pth")]
        assert pth == ["baton.pth"]
        assert zf.read("baton.pth").decode().strip() == str(PACKAGE)


def test_subset_reader_reads_pyproject_as_tomllib_does():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    text = (PACKAGE / "pyproject.toml").read_text()
    assert baton_build._parse_toml_subset(text) == tomllib.loads(text)


def test_subset_reader_refuses_what_it_cannot_read():
    with pytest.raises(ValueError):
        baton_build._parse_toml_subset('[project]\nurls = {home = "x"}\n')
    with pytest.raises(ValueError):
        baton_build._parse_toml_subset("[project]\nnumbers = [1, 2]\n")
