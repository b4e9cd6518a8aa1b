# An MJPEG camera (v4l2loopback, fed by mjpeg-feeder): frames with Huffman tables, without them
# (as UVC cameras send them), and a broken one every other frame. Beside it, a camera whose name
# carries a terminal's escape sequences (a USB device names itself): listed and checked harmless.
. /scenarios/common.sh
hostile=$(printf 'evil\033]0;owned\007\033[31mred')
modprobe v4l2loopback devices=2 video_nr=10,13 exclusive_caps=1,0 "card_label=mjpeg-camera,$hostile"
step devices camroll devices
step check-hostile camroll check -d /dev/video13
camroll snap -d pattern -r 640x480 --no-exif -o "$OUT/source.jpg" --db /tmp/source.sqlite3 --quiet
for mode in keep strip mixed; do
    mjpeg-feeder /dev/video10 640 480 $mode "$OUT/source.jpg" 2>"$OUT/feeder-$mode.err" &
    feeder=$!
    wait_for_capture /dev/video10
    [ $mode = keep ] && camroll formats -d /dev/video10 >"$OUT/formats.out" 2>&1
    camroll snap -d /dev/video10 --frames 4 -o "$OUT/$mode/{seq}.jpg" --db "$OUT/catalog.sqlite3" \
        >"$OUT/$mode.out" 2>"$OUT/$mode.err"
    echo $? >"$OUT/$mode.rc"
    kill $feeder
    wait $feeder 2>/dev/null
done
true
