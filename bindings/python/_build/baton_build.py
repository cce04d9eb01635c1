"""The PEP 517 build backend of the `baton` package, on the standard
library alone.

The package is pure Python, so a wheel is a zip of the package directory
and its metadata. Building it with setuptools needs setuptools and wheel in
the interpreter that runs pip, which a python3 outside Debian's packages
(pyenv's, a distribution's minimal one) often lacks, and offline they
cannot be fetched: `pip install --no-build-isolation --no-index
./bindings/python` then fails with "invalid command 'bdist_wheel'". This
backend needs nothing but Python 3.9 or later, so that command works with
any python3 a user has.

pyproject.toml names it (build-backend = "baton_build", backend-path =
["_build"]) and gives the metadata in its [project] table; [tool.baton-build]
names the package directory. The hooks: build_wheel, build_sdist,
build_editable (a .pth file pointing at the source tree), the
prepare_metadata_* hooks, and get_requires_* (nothing). Wheels are
reproducible: entries sorted, fixed timestamps and modes.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
TAG = "py3-none-any"
# Zip's earliest date, so that two builds of the same tree are identical.
EPOCH = (1980, 1, 1, 0, 0, 0)

__all__ = [
    "build_wheel",
    "build_sdist",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "read_pyproject",
]


# --- pyproject.toml ---------------------------------------------------------


def _parse_toml_subset(text: str) -> Dict[str, Any]:
    """The small part of TOML pyproject.toml uses, for Pythons before 3.11
    (no tomllib): [table] and [a.b] headers, `key = "string"`, `key =
    true/false`, `key = 123`, and `key = ["string", ...]` over one line or
    several.
    Anything else is an error, so that a file this cannot read fails the
    build rather than giving wrong metadata."""
    data: Dict[str, Any] = {}
    table = data
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = _strip_comment(lines[i]).strip()
        i += 1
        if not line:
            continue
        header = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
        if header:
            table = data
            for part in header.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, eq, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not re.fullmatch(r"[A-Za-z0-9_-]+", key):
            raise ValueError(f"pyproject.toml:{i}: cannot read {line!r}")
        if value.startswith("[") and not _closed(value):
            while i < len(lines) and not _closed(value):
                value += " " + _strip_comment(lines[i]).strip()
                i += 1
        table[key] = _value(value, i)
    return data


def _strip_comment(line: str) -> str:
    """The line without a # comment (a # inside a string stays)."""
    quoted = False
    for at, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:at]
    return line


def _closed(value: str) -> bool:
    return value.rstrip().endswith("]")


def _value(value: str, line: int) -> Any:
    if value in ("true", "false"):
        return value == "true"
    if re.fullmatch(r"[+-]?[0-9]+", value):
        return int(value)
    if value.startswith("["):
        inner = value.strip()[1:-1]
        items = re.findall(r'"((?:[^"\\]|\\.)*)"', inner)
        rest = re.sub(r'"((?:[^"\\]|\\.)*)"', "", inner)
        if rest.replace(",", "").strip():
            raise ValueError(f"pyproject.toml:{line}: only strings in lists")
        return [_unescape(s) for s in items]
    found = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', value)
    if found is None:
        raise ValueError(f"pyproject.toml:{line}: cannot read value {value!r}")
    return _unescape(found.group(1))


def _unescape(s: str) -> str:
    return s.replace('\\"', '"').replace("\\\\", "\\")


def read_pyproject(root: Path = ROOT) -> Dict[str, Any]:
    """pyproject.toml as a dict: with tomllib where there is one (3.11+),
    else with the subset reader above."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:
        return _parse_toml_subset(text)
    return dict(tomllib.loads(text))


# --- Metadata ---------------------------------------------------------------


class _Project:
    """What the wheel and the sdist say about the project."""

    def __init__(self, root: Path) -> None:
        data = read_pyproject(root)
        project = data["project"]
        self.root = root
        self.name: str = project["name"]
        self.version: str = project["version"]
        self.package: str = data.get("tool", {}).get("baton-build", {}).get(
            "package", self.name
        )
        # The distribution name as file names spell it (PEP 427, 503).
        self.stem = re.sub(r"[-_.]+", "_", self.name).lower() + "-" + self.version
        self.project = project

    def metadata(self) -> str:
        """The METADATA / PKG-INFO text (core metadata 2.1)."""
        p = self.project
        lines = [
            "Metadata-Version: 2.1",
            f"Name: {self.name}",
            f"Version: {self.version}",
        ]
        if p.get("description"):
            lines.append(f"Summary: {p['description']}")
        if p.get("requires-python"):
            lines.append(f"Requires-Python: {p['requires-python']}")
        for c in p.get("classifiers", []):
            lines.append(f"Classifier: {c}")
        for d in p.get("dependencies", []):
            lines.append(f"Requires-Dist: {d}")
        body = ""
        readme = p.get("readme")
        if readme:
            lines.append("Description-Content-Type: text/markdown")
            body = (self.root / readme).read_text(encoding="utf-8")
        return "\n".join(lines) + "\n\n" + body

    def package_files(self) -> List[Tuple[str, Path]]:
        """(path in the wheel, file) for every file of the package
        directory, sorted, without caches."""
        out = []
        base = self.root / self.package
        for path in sorted(base.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts:
                continue
            if path.suffix in (".pyc", ".pyo"):
                continue
            out.append((path.relative_to(self.root).as_posix(), path))
        return out


def _dist_info_files(project: _Project) -> List[Tuple[str, bytes]]:
    """METADATA and WHEEL of the .dist-info directory (RECORD comes last)."""
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: baton_build\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {TAG}\n"
    )
    return [
        ("METADATA", project.metadata().encode("utf-8")),
        ("WHEEL", wheel.encode("utf-8")),
    ]


def _write_dist_info(directory: str, project: _Project) -> str:
    name = project.stem + ".dist-info"
    target = Path(directory) / name
    target.mkdir(parents=True, exist_ok=True)
    for file, data in _dist_info_files(project):
        (target / file).write_bytes(data)
    return name


# --- Wheels -----------------------------------------------------------------


def _digest(data: bytes) -> str:
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _write_wheel(
    directory: str, project: _Project, files: List[Tuple[str, bytes]]
) -> str:
    """A wheel of `files` (path, bytes) and the dist-info; its file name."""
    dist_info = project.stem + ".dist-info"
    entries = list(files) + [
        (f"{dist_info}/{name}", data) for name, data in _dist_info_files(project)
    ]
    record = io.StringIO()
    for path, data in entries:
        record.write(f"{path},{_digest(data)},{len(data)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8")))
    filename = f"{project.stem}-{TAG}.whl"
    with zipfile.ZipFile(
        Path(directory) / filename, "w", compression=zipfile.ZIP_DEFLATED
    ) as zf:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return filename


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """PEP 517: the wheel, into wheel_directory; its file name."""
    project = _Project(ROOT)
    files = [(arc, path.read_bytes()) for arc, path in project.package_files()]
    return _write_wheel(wheel_directory, project, files)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """PEP 660: a wheel whose .pth file puts this source tree on sys.path,
    so that edits to the package take effect without reinstalling."""
    project = _Project(ROOT)
    pth = (str(ROOT) + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, project, [(f"{project.name}.pth", pth)])


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None
) -> str:
    """PEP 517: the .dist-info directory's name, written there."""
    return _write_dist_info(metadata_directory, _Project(ROOT))


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None
) -> str:
    return _write_dist_info(metadata_directory, _Project(ROOT))


def get_requires_for_build_wheel(
    config_settings: Optional[Dict[str, Any]] = None
) -> List[str]:
    return []


def get_requires_for_build_editable(
    config_settings: Optional[Dict[str, Any]] = None
) -> List[str]:
    return []


def get_requires_for_build_sdist(
    config_settings: Optional[Dict[str, Any]] = None
) -> List[str]:
    return []


# --- The sdist --------------------------------------------------------------


def build_sdist(
    sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None
) -> str:
    """PEP 517: NAME-VERSION.tar.gz with pyproject.toml, the README, this
    backend, the package and PKG-INFO; its file name."""
    project = _Project(ROOT)
    top = project.stem
    members: List[Tuple[str, bytes]] = [
        ("PKG-INFO", project.metadata().encode("utf-8")),
        ("pyproject.toml", (ROOT / "pyproject.toml").read_bytes()),
    ]
    readme = project.project.get("readme")
    if readme:
        members.append((readme, (ROOT / readme).read_bytes()))
    members.append(
        ("_build/baton_build.py", Path(__file__).read_bytes()),
    )
    members += [(arc, path.read_bytes()) for arc, path in project.package_files()]
    filename = f"{top}.tar.gz"
    with tarfile.open(
        os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT
    ) as tf:
        for arc, data in sorted(members):
            info = tarfile.TarInfo(f"{top}/{arc}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
    return filename
