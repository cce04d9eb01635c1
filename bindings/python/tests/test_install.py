"""`pip install ./bindings/python` offline, into a fresh venv, with only
Debian's packages; the installed copy then takes a lock."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from conftest import PACKAGE, ROOT


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


def test_pip_install_offline_then_lock(cluster, tmp_path, unique):
    # A copy, so that the build leaves nothing in the source tree.
    source = tmp_path / "src"
    shutil.copytree(
        PACKAGE, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "build")
    )
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
        check=True,
        timeout=120,
    )
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
