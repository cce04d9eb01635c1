#!/bin/sh
# tests/cli/test_refusals with nodes that run without TLS: a paused node
# being added still completes a TCP connection there, so `member add` gets
# as far as leaving a spare, which a retry finishes and `member remove`
# undoes (with TLS it is refused before anything changes). Run from the
# build directory, as `make check` does.
BATON_TEST_TLS=off
export BATON_TEST_TLS
exec ./tests/cli/test_refusals "$@"
