"""`pip install ./bindings/python` offline, into a fresh venv, with the
python3 running the tests (Debian's, under scripts/test) and with the
python3 first on the PATH, which a user types (here pyenv's, which has no
`wheel`: with a setuptools backend pip failed there with "invalid command
'bdist_wheel'"); the installed copy then takes a lock. The in-tree backend
(_build/baton_build.py) needs nothing but the standard library."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional

import pytest

from conftest import PACKAGE, ROOT


def path_python() -> Optional[str]:
    """The interpreter `python3` on the PATH runs (through a pyenv shim,
    its real executable), or None when there is none."""
    exe = shutil.which("python3")
    if exe is None:
        return None
    out = subprocess.run(
        [exe, "-c", "import sys; print(sys.executable)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.strip() or None if out.returncode == 0 else None


def interpreters() -> List[object]:
    """Debian's python3 (the one running the tests), and the PATH's when it
    is another one; a skip saying why when it is not."""
    here = os.path.realpath(sys.executable)
    found = path_python()
    cases: List[object] = [pytest.param(sys.executable, id="this-python3")]
    if found is None:
        reason = "no python3 on the PATH"
    elif os.path.realpath(found) == here:
        reason = f"the PATH's python3 is {found}, the one running the tests"
    else:
        reason = ""
    cases.append(
        pytest.param(
            found,
            id="path-python3",
            marks=[pytest.mark.skip(reason=reason)] if reason else [],
        )
    )
    return cases


def project_version() -> str:
    """The version pyproject.toml gives the package, which must be the
    one the package says it is (baton.__version__) and Baton's."""
    text = (PACKAGE / "pyproject.toml").read_text()
    found = re.search(r'^version = "([^"]+)"$', text, re.M)
    assert found is not None
    init = (PACKAGE / "baton" / "__init__.py").read_text()
    assert f'__version__ = "{found.group(1)}"' in init
    configure = (ROOT / "configure.ac").read_text()
    assert f"AC_INIT([baton], [{found.group(1)}]" in configure
    return found.group(1)


@pytest.mark.parametrize("python", interpreters())
def test_pip_install_offline_then_lock(cluster, tmp_path, unique, python):
    # A copy, so that the build leaves nothing in the source tree.
    source = tmp_path / "src"
    shutil.copytree(
        PACKAGE, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build")
    )
    venv = tmp_path / "venv"
    # No --system-site-packages: the build must need nothing the venv lacks.
    subprocess.run(
        [python, "-m", "venv", str(venv)],
        check=True,
        timeout=120,
    )
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; print(sys.version)"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    print(f"installing with {python} ({version})")
    pip = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--no-build-isolation",
            "--no-index",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert f"Successfully installed baton-{project_version()}" in pip.stdout
    name = unique()
    code = (
        "import baton, json, os; c = baton.Client();\n"
        f"lease = c.acquire({name!r}, wait=5); lease.release(); c.close();\n"
        "print(json.dumps([baton.__file__, baton.library_path(), lease.token,"
        " os.path.exists(os.path.join(os.path.dirname(baton.__file__), 'py.typed'))]))"
    )
    env = dict(os.environ, BATON_LIBRARY=str(ROOT / "build" / ".libs" / "libbaton.so"))
    env.pop("PYTHONPATH", None)
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd=str(tmp_path),  # away from the source tree
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    import json

    path, library, token, typed = json.loads(run.stdout)
    assert path.startswith(str(venv)) and library == env["BATON_LIBRARY"]
    assert token > 0 and typed
