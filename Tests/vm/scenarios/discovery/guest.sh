# Device discovery among many node types (vivid's full set on its second instance: video
# output, VBI, radio, SDR, metadata capture and output, touch), checked against v4l2-ctl.
. /scenarios/common.sh
ls /dev >"$OUT/dev.txt"
for node in /dev/video*; do
    echo "== $node" >>"$OUT/nodes.txt"
    v4l2-ctl -d "$node" --info >>"$OUT/nodes.txt" 2>&1
done
step devices camroll devices --json
step snap camroll snap -r 320x180 -o "$OUT/first/{seq}.jpg" --db "$OUT/catalog.sqlite3"
# What the shell completions offer after --set and -r (asked under a 100 ms limit there), beside
# v4l2-ctl's own list; the time of one answer, in milliseconds.
step complete-controls camroll __complete controls -d /dev/video0
step complete-sizes camroll __complete sizes -d /dev/video0
v4l2-ctl -d /dev/video0 --list-ctrls-menus >"$OUT/ctrls.txt" 2>&1
v4l2-ctl -d /dev/video0 --list-formats-ext >"$OUT/formats-ext.txt" 2>&1
timeit complete camroll __complete controls -d /dev/video0 | cut -d' ' -f2 >"$OUT/complete-ms.txt"
meta=$(for node in /dev/video*; do
    v4l2-ctl -d "$node" --info 2>/dev/null | sed -n '/Device Caps/,$p' | grep -q "Metadata Capture" && echo "$node"
done | head -n 1)
echo "$meta" >"$OUT/meta-node.txt"
step check-meta camroll check -d "$meta"
step snap-meta camroll snap -d "$meta" -o "$OUT/meta/{seq}.jpg" --db "$OUT/catalog.sqlite3"
true
