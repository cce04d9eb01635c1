"""The ctypes mirrors against the C header: sizes, offsets, functions."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess

import pytest

from baton import _library, _structs

from conftest import HEADER, public_header_text



def test_every_function_of_the_header_is_bound():
    declared = set(
        re.findall(r"BATON_API\s+[^;(]*?\b(baton_\w+)\s*\(", public_header_text())
    )
    assert len(declared) >= 36
    assert {"baton_campaign", "baton_watch_next", "baton_watch_close"} <= declared
    assert declared == set(_library.FUNCTIONS)


def test_every_struct_of_the_header_is_mirrored():
    defined = set(re.findall(r"^struct (baton_\w+) \{", public_header_text(), re.M))
    # The election's and the watch's structs among them.
    assert {"baton_leader", "baton_event", "baton_options", "baton_fence"} <= defined
    assert defined == set(_structs.ALL)


def test_struct_layout_matches_the_header(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to read the header's layout with")
    lines = [
        "#include <stdio.h>",
        "#include <stddef.h>",
        '#include "baton.h"',
        "int main(void) {",
    ]
    expected = []
    for cname, cls in _structs.ALL.items():
        lines.append(f'printf("{cname} %zu\\n", sizeof(struct {cname}));')
        expected.append(f"{cname} {ctypes.sizeof(cls)}")
        for field, *_ in cls._fields_:
            lines.append(
                f'printf("{cname}.{field} %zu\\n", offsetof(struct {cname}, {field}));'
            )
            expected.append(f"{cname}.{field} {getattr(cls, field).offset}")
    lines += ["return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, f"-I{HEADER.parent}", str(src), "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert got.split("\n")[:-1] == expected


def test_options_mirror_reads_what_the_library_writes():
    lib = _library.load()
    buf = ctypes.create_string_buffer(
        ctypes.sizeof(_structs.Options) + _structs.OPTIONS_SLACK
    )
    lib.baton_options_init(buf)
    o = _structs.Options.from_buffer(buf)
    # baton.h's documented defaults.
    assert (o.ttl_ms, o.request_timeout_ms, o.lock_delay_ms) == (10000, 5000, 0)
    assert not o.client_name and not o.tls_ca and not o.on_session
