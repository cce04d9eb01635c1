"""The table of codes against baton/errors.h and libbaton, and the hierarchy."""

from __future__ import annotations

import pickle
import re

import pytest

import baton
from baton import _library, errors

from conftest import public_header_text

HEADER = public_header_text()


def header_codes():
    """(NAME, number, text) of every X(...) line of BATON_ERROR_MAP."""
    block = HEADER.split("#define BATON_ERROR_MAP(X)", 1)[1].split(
        "/* clang-format on */"
    )[0]
    rows = re.findall(r'X\((\w+),\s*(-?\d+),\s*"((?:[^"\\]|\\.)*)"\)', block)
    return [(name, int(num), text) for name, num, text in rows]


def test_table_is_the_header_map():
    from_header = header_codes()
    assert len(from_header) >= 45
    assert [(c.name, c.number, c.text) for c in errors.CODES] == from_header


@pytest.mark.parametrize("row", errors.CODES, ids=lambda r: r.name)
def test_table_matches_the_library(row):
    lib = _library.load()
    assert lib.baton_errname(row.number).decode() == "BATON_" + row.name
    assert lib.baton_strerror(row.number).decode() == row.text
    assert errors.errname(row.number) == "BATON_" + row.name


def test_library_knows_no_code_beyond_the_table():
    lib = _library.load()
    last = min(c.number for c in errors.CODES)
    assert lib.baton_errname(last - 1).decode() == "BATON_E?"
    assert lib.baton_errname(0).decode() == "BATON_OK" == errors.errname(0)


def test_each_code_has_its_own_class():
    classes = [row.cls for row in errors.CODES]
    assert len(set(classes)) == len(classes)
    for row in errors.CODES:
        assert row.cls.code == row.number
        assert issubclass(row.cls, baton.Error)
        assert getattr(baton, row.cls.__name__) is row.cls  # exported


@pytest.mark.parametrize("row", errors.CODES, ids=lambda r: r.name)
def test_error_for_carries_code_and_message(row):
    e = errors.error_for(row.number, "acquire 'x'")
    assert type(e) is row.cls
    assert (e.code, e.name, e.message) == (row.number, "BATON_" + row.name, row.text)
    assert str(e) == f"acquire 'x': {row.text} (BATON_{row.name})"
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is row.cls and again.code == row.number


def test_unknown_code_is_a_plain_error():
    e = errors.error_for(-999)
    assert type(e) is baton.Error and e.code == -999 and e.name == "BATON_E?"


def test_groups_and_builtin_bases():
    assert issubclass(baton.ExpiredError, baton.LockLost)
    assert issubclass(baton.RevokedError, baton.LockLost)
    assert issubclass(baton.RevokedError, baton.NotHolderError)
    assert issubclass(baton.JeopardyError, baton.LockLost)
    assert issubclass(baton.TimedOutError, TimeoutError)
    assert issubclass(baton.NoAnswerError, TimeoutError)
    assert issubclass(baton.NoAnswerError, baton.ClusterUnavailable)
    assert issubclass(baton.NotLeaderError, baton.ClusterUnavailable)
    assert issubclass(baton.InvalidNameError, ValueError)
    assert issubclass(baton.PermissionDeniedError, PermissionError)
    assert issubclass(baton.TooManyWaitersError, baton.LimitError)
    assert not issubclass(baton.BusyError, baton.LockLost)
    assert baton.RevokedError.code == baton.NotHolderError.code
    assert baton.JeopardyError.code == baton.NoAnswerError.code
