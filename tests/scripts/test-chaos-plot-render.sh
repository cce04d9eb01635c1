#!/usr/bin/env bash
# Render test of chaos-plot's page (docs/chaos.md, "Picture"), printing
# TAP: headless Chromium loads the page of a generated run
# (tests/scripts/chaos-run-gen.py) with its console logged, and must log
# nothing (the page has no script; a console message would be an error);
# the DOM it parsed holds the SVG shapes; and its screenshot is not blank:
# enough non-white pixels, and some in each outcome's colour. Controls: a
# page that throws must log, and a blank page's screenshot must count as
# blank, so neither check passes by not looking. Skipped when Chromium
# (Debian's `chromium`, which scripts/setup installs) is missing.
# CHAOS_PLOT=path runs another chaos-plot.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
plot=${CHAOS_PLOT:-$PWD/tests/chaos/chaos-plot}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
        echo "1..0 # SKIP chromium is not installed (scripts/setup installs it)"
        exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-chaos-plot-render.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# Chromium, headless, on file $1 with the remaining flags; its log (the
# console's messages among it) in $tmp/$(basename $1).log.
chrome() {
        local page=$1
        shift
        # Root (the test machines) needs --no-sandbox; a profile of our own
        # keeps it from others' Chromium; a virtual time budget makes the
        # screenshot wait for the whole page to be painted (without it a
        # loaded machine gets a part of the page).
        timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
                --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 \
                --virtual-time-budget=5000 \
                --hide-scrollbars --window-size=1440,1000 "$@" \
                "file://$page" 2>"$tmp/$(basename "$page").log"
}

# Pixels of PNG $1 that are not white, then those near each outcome's
# colour (ok, fail, info), space-separated.
pixels() {
        python3 - "$1" <<'PY'
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = [(0x4C, 0xAE, 0x4C), (0xD9, 0x53, 0x4F), (0xF0, 0xA0, 0x20)]
nonwhite, near = 0, [0, 0, 0]
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pr) & 255
    for i in range(0, stride, bpp):
        r, g, bl = line[i], line[i + 1], line[i + 2]
        if r < 240 or g < 240 or bl < 240:
            nonwhite += 1
        for k, (cr, cg, cb) in enumerate(colours):
            if abs(r - cr) + abs(g - cg) + abs(bl - cb) < 40:
                near[k] += 1
    prev = line
print(nonwhite, *near)
PY
}

"$root/tests/scripts/chaos-run-gen.py" --out "$tmp/run" --seconds 120 \
        --workers 6 --nodes 3 --rate 20 --seed 2 >/dev/null || exit 1
"$plot" "$tmp/run" >/dev/null
tap_check "chaos-plot draws the run" test -s "$tmp/run/history.html"
page=$tmp/run/history.html

chrome "$page" --screenshot="$tmp/page.png" >/dev/null
tap_check "Chromium takes a screenshot of the page" test -s "$tmp/page.png"
tap_check "the page logs nothing to the console" \
        sh -c "test -f '$tmp/history.html.log' && ! grep -q ':CONSOLE' '$tmp/history.html.log'"
grep ':CONSOLE' "$tmp/history.html.log" | head -5 | sed 's/^/# /'

chrome "$page" --dump-dom >"$tmp/dom.html"
tap_check "the parsed DOM holds the lanes, the fault bands and the points" sh -c "
        grep -q 'class=\"lane\"' '$tmp/dom.html' &&
        grep -q 'class=\"fault\"' '$tmp/dom.html' &&
        grep -q 'class=\"pts ok\"' '$tmp/dom.html'"

read -r nonwhite green red amber < <(pixels "$tmp/page.png")
echo "# screenshot: $nonwhite non-white pixels of 1440000; ok $green, fail $red, info $amber"
tap_check "the screenshot is not blank (over 5% of its pixels drawn)" \
        test "${nonwhite:-0}" -gt 72000
tap_check "the screenshot shows each outcome's colour" sh -c \
        "[ ${green:-0} -gt 1000 ] && [ ${red:-0} -gt 50 ] && [ ${amber:-0} -gt 50 ]"

# Controls: the checks above can fail.
printf '<!DOCTYPE html><html><body><script>throw new Error("control")</script></body></html>\n' \
        >"$tmp/throws.html"
chrome "$tmp/throws.html" --screenshot="$tmp/throws.png" >/dev/null
tap_check "control: a page that throws logs to the console" \
        grep -q ':CONSOLE.*control' "$tmp/throws.html.log"
read -r blank _ < <(pixels "$tmp/throws.png")
tap_check "control: a blank page's screenshot counts as blank ($blank pixels)" \
        test "${blank:-1}" -lt 100

tap_end
