"""Where a Client connects and with which TLS files.

The same rules as batonctl: an argument, else the environment variable,
else the default.

- endpoints: the `endpoints` argument, else BATON_ENDPOINTS, else the local
  cluster of scripts/cluster (libbaton's BATON_DEFAULT_ENDPOINTS).
- TLS: a `TLS` given as `tls`, else BATON_CACERT, BATON_CERT and BATON_KEY
  (all three), else plain text.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Union

#: The local cluster that scripts/cluster starts (BATON_DEFAULT_ENDPOINTS).
DEFAULT_ENDPOINTS = "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103"

Endpoints = Union[str, Iterable[str], None]

_TLS_VARS = ("BATON_CACERT", "BATON_CERT", "BATON_KEY")


@dataclass(frozen=True)
class TLS:
    """The PEM files of a TLS client: the CA that signed the nodes'
    certificates, this client's certificate and its key."""

    ca: str
    cert: str
    key: str

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None) -> Optional["TLS"]:
        """The files named by BATON_CACERT, BATON_CERT and BATON_KEY; None
        when none is set. ValueError when only some are (as libbaton)."""
        env = os.environ if environ is None else environ
        values = [env.get(v) or None for v in _TLS_VARS]
        if all(v is None for v in values):
            return None
        if any(v is None for v in values):
            missing = [n for n, v in zip(_TLS_VARS, values) if v is None]
            raise ValueError(
                "BATON_CACERT, BATON_CERT and BATON_KEY go together; missing "
                + ", ".join(missing)
            )
        ca, cert, key = values
        assert ca is not None and cert is not None and key is not None
        return cls(ca, cert, key)


def endpoints_from(endpoints: Endpoints) -> str:
    """The endpoint list to connect to, as "host:port,host:port"."""
    if endpoints is None:
        endpoints = os.environ.get("BATON_ENDPOINTS") or DEFAULT_ENDPOINTS
    if not isinstance(endpoints, str):
        endpoints = ",".join(endpoints)
    return endpoints


def tls_from(tls: Union[TLS, bool, None]) -> Optional[TLS]:
    """The TLS files to use: `tls` itself, else the environment's.

    tls=False asks for plain text. libbaton reads the environment whenever
    no files are given and has no switch to refuse them, so plain text
    cannot be had while the variables are set: that is a ValueError rather
    than a silent TLS connection.
    """
    if isinstance(tls, TLS):
        return tls
    if tls is None or tls is True:
        found = TLS.from_env()
        if tls is True and found is None:
            raise ValueError(
                "tls=True but BATON_CACERT, BATON_CERT, BATON_KEY are unset"
            )
        return found
    if tls is False:
        if any(os.environ.get(v) for v in _TLS_VARS):
            raise ValueError(
                "tls=False, but BATON_CACERT/BATON_CERT/BATON_KEY are set and "
                "libbaton would use them: unset them for a plain-text client"
            )
        return None
    raise TypeError(
        f"tls must be a baton.TLS, a bool or None, not {type(tls).__name__}"
    )
