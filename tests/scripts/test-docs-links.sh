#!/usr/bin/env bash
# Every relative link of the documents leads somewhere, printing TAP. In
# README.md and every docs/**/*.md: each markdown link [text](target) and
# each reference definition [label]: target outside code (fenced blocks
# and `code spans`) that is not a URL (http:, https:, mailto:, ...) must
# name a file or directory that exists, relative to the document; a
# #fragment on a link to a markdown file (or alone, for the document
# itself) must be the anchor of one of its headings as GitHub makes them
# (lower case; punctuation other than - and _ dropped; spaces become -; a
# repeated heading gets -1, -2, ...) or an HTML id/name in it.
#
# Two cases come first, on texts of their own: one with a link to a
# missing file and one to a missing heading, which the check must refuse
# (it can fail), and one whose links are all good, which it must pass.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-docs-links.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! command -v python3 >/dev/null 2>&1; then
        echo "1..0 # SKIP python3 is missing (scripts/setup installs it)"
        exit 0
fi

# check FILE...: print "FILE:LINE: TARGET: why" for each broken link; exit
# status 1 when there is one.
check() {
        python3 - "$@" <<'EOF'
import os
import re
import sys

FENCE = re.compile(r'^\s*(```|~~~)')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
INLINE = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)')
HTMLID = re.compile(r'<[^>]*\b(?:id|name)\s*=\s*"([^"]+)"')
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')


def prose(path):
    """(line number, text) of each line outside fenced code."""
    fenced = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fenced is None:
                    fenced = m.group(1)
                elif m.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield n, line.rstrip('\n')


def slug(text):
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # links: text
    text = re.sub(r'<[^>]+>', '', text)                      # HTML tags
    text = text.replace('`', '').replace('*', '')
    text = text.lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen = {}
        found = set()
        for _, line in prose(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else '%s-%d' % (base, k))
            for m in HTMLID.finditer(line):
                found.add(m.group(1))
        anchors_cache[path] = found
    return anchors_cache[path]


bad = 0
for doc in sys.argv[1:]:
    here = os.path.dirname(doc)
    for n, line in prose(doc):
        code_free = re.sub(r'`[^`]*`', '', line)
        targets = [m.group(1) for m in INLINE.finditer(code_free)]
        m = REFDEF.match(code_free)
        if m:
            targets.append(m.group(1))
        for target in targets:
            target = target.strip('<>')
            if SCHEME.match(target):
                continue
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(here, path)) if path else doc
            why = None
            if not os.path.exists(dest):
                why = 'no such file'
            elif frag and dest.endswith('.md') and frag not in anchors(dest):
                why = 'no heading with this anchor in ' + os.path.relpath(dest)
            if why:
                print('%s:%d: %s: %s' % (doc, n, target, why))
                bad = 1
sys.exit(bad)
EOF
}

echo "1..$((2 + $(find "$root/docs" -name '*.md' | wc -l) + 1))"
failed=0

# 1: the check refuses a link to a missing file and one to a missing
# heading, and names both.
mkdir -p "$tmp/bad/sub"
printf '# Title\n\n## A section\n' >"$tmp/bad/sub/there.md"
cat >"$tmp/bad/doc.md" <<'EOF'
# Doc

A good link to [there](sub/there.md#a-section), one to
[a missing file](sub/missing.md), and one to
[a missing heading](sub/there.md#no-such-section).
EOF
out=$(check "$tmp/bad/doc.md")
rc=$?
if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] &&
   printf '%s\n' "$out" | grep -q 'sub/missing.md: no such file' &&
   printf '%s\n' "$out" | grep -q 'sub/there.md#no-such-section: no heading'; then
        echo "ok 1 - the check refuses a missing file and a missing heading"
else
        echo "not ok 1 - the check did not refuse exactly the two broken links (exit $rc)"
        failed=1
        printf '%s\n' "$out" | sed 's/^/# /'
fi

# 2: a text whose links all lead somewhere passes: a file, a directory,
# a heading of another page, this page's own heading, a repeated
# heading's second anchor, a heading with code and punctuation, links
# inside code (not links), URLs and a reference definition.
mkdir -p "$tmp/good/sub"
cat >"$tmp/good/sub/there.md" <<'EOF'
# There

## Notes
## Notes
## `batonctl lock`, and --grace (ms)
EOF
cat >"$tmp/good/doc.md" <<'EOF'
# Doc: the good one

See [there](sub/there.md), [the folder](sub/), [notes](sub/there.md#notes),
[the second notes](sub/there.md#notes-1),
[lock](sub/there.md#batonctl-lock-and---grace-ms), [top](#doc-the-good-one),
<https://example.invalid/> and [a site](https://example.invalid/x.md).
`[not a link](missing.md)`

```
[not a link either](missing.md)
```

[ref]: sub/there.md#notes
EOF
out=$(check "$tmp/good/doc.md")
rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then
        echo "ok 2 - the check passes links that lead somewhere"
else
        echo "not ok 2 - the check refused good links (exit $rc)"
        failed=1
        printf '%s\n' "$out" | sed 's/^/# /'
fi

# Then the documents, one case each.
i=2
cd "$root" || exit 1
while IFS= read -r doc; do
        i=$((i + 1))
        out=$(check "$doc")
        if [ $? -eq 0 ]; then
                echo "ok $i - $doc: every relative link leads somewhere"
        else
                echo "not ok $i - $doc: broken links"
                printf '%s\n' "$out" | sed 's/^/# /'
                failed=1
        fi
done < <(printf '%s\n' README.md; find docs -name '*.md' | sort)
exit $failed
