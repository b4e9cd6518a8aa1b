# The default warm-up (`--skip auto`) against real drivers: a v4l2loopback camera whose picture
# brightens for 1.2 s once the shot is asked for (ramp-feeder: level 40 → 180), and vivid, whose
# picture is steady from its first frame.
. /scenarios/common.sh
modprobe v4l2loopback devices=2 video_nr=11,12 exclusive_caps=1,1 card_label=ramp-camera,mjpeg-camera
# The first camroll of a boot starts in about a second (its pages read, its code translated
# for the first time), the next in a tenth of that: not the first, or the ramp is over first.
camroll --version >/dev/null
ramp() {  # ramp NAME [swing | CAMROLL-OPTIONS...]: a fresh dark feeder, its ramp begun, then camroll
    name=$1
    shift
    mode=
    if [ "${1:-}" = swing ]; then mode=swing; shift; fi
    rm -f /tmp/go
    ramp-feeder /dev/video11 640 480 /tmp/go 1200 $mode 2>"$OUT/feeder-$name.err" &
    feeder=$!
    wait_for_capture /dev/video11
    touch /tmp/go
    sleep 0.1
    CAMROLL_TRACE=1 camroll snap --json -d /dev/video11 -o "$OUT/$name.jpg" --db "$OUT/catalog.sqlite3" "$@" \
        >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
    kill $feeder
    wait $feeder 2>/dev/null
}
ramp auto
ramp fixed --skip 2
ramp swing swing
# vivid's colour bars (on-screen text off: every frame the same): settled on the third frame.
CAMROLL_TRACE=1 camroll snap --json -d /dev/video0 -r 640x480 -f yuyv --set osd_text_mode=2 -o "$OUT/vivid.jpg" \
    --db "$OUT/catalog.sqlite3" >"$OUT/vivid.out" 2>"$OUT/vivid.err"
echo $? >"$OUT/vivid.rc"
# NV12 goes through libv4lconvert: the brightness is read from what it makes of a frame.
CAMROLL_TRACE=1 camroll snap --json -d /dev/video0 -r 640x360 -f nv12 --set osd_text_mode=2 -o "$OUT/nv12.jpg" \
    --db "$OUT/catalog.sqlite3" >"$OUT/nv12.out" 2>"$OUT/nv12.err"
echo $? >"$OUT/nv12.rc"
# An MJPEG camera sending one picture, without Huffman tables as UVC cameras do: the brightness
# is read from each frame decoded at 1/8 scale.
camroll snap -d pattern -r 640x480 --no-exif -o /tmp/source.jpg --db /tmp/source.sqlite3 --quiet
mjpeg-feeder /dev/video12 640 480 strip /tmp/source.jpg 2>"$OUT/feeder-mjpeg.err" &
feeder=$!
wait_for_capture /dev/video12
CAMROLL_TRACE=1 camroll snap --json -d /dev/video12 -o "$OUT/mjpeg.jpg" --db "$OUT/catalog.sqlite3" \
    >"$OUT/mjpeg.out" 2>"$OUT/mjpeg.err"
echo $? >"$OUT/mjpeg.rc"
kill $feeder
wait $feeder 2>/dev/null
true
