# The guest works at all: vivid is there, camroll runs (with its libraries) and saves. Then the
# run's charts: SVG needs nothing; PNG needs librsvg, which this guest does not have, so it is a
# one-line error (exit 69) and no file.
. /scenarios/common.sh
set -x
v4l2-ctl -d /dev/video0 --info >"$OUT/info.txt"
camroll --version >"$OUT/version.txt"
step snap camroll snap -d pattern -r 320x240 -n 3 -o "$OUT/pattern/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step plot-svg camroll stats --db "$OUT/catalog.sqlite3" --plot "$OUT/run.svg"
step plot-png camroll stats --db "$OUT/catalog.sqlite3" --plot "$OUT/run.png"
