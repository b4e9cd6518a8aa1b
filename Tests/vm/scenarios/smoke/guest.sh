# The guest works at all: vivid is there, camroll runs (with its libraries) and saves.
set -x
v4l2-ctl -d /dev/video0 --info >"$OUT/info.txt"
camroll --version >"$OUT/version.txt"
camroll snap -d pattern -r 320x240 -n 3 -o "$OUT/pattern/{seq}.jpg" --db "$OUT/catalog.sqlite3"
