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
meta=$(for node in /dev/video*; do
    v4l2-ctl -d "$node" --info 2>/dev/null | sed -n '/Device Caps/,$p' | grep -q "Metadata Capture" && echo "$node"
done | head -n 1)
echo "$meta" >"$OUT/meta-node.txt"
step check-meta camroll check -d "$meta"
step snap-meta camroll snap -d "$meta" -o "$OUT/meta/{seq}.jpg" --db "$OUT/catalog.sqlite3"
true
