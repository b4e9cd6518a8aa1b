# The golden frame: with vivid's on-screen text off, every YUYV 640x480 frame of its colour bars
# is the same. Take one raw with v4l2-ctl, and one JPEG with camroll (setting the control itself).
v4l2-ctl -d /dev/video0 -c osd_text_mode=2
v4l2-ctl -d /dev/video0 -v width=640,height=480,pixelformat=YUYV --stream-mmap --stream-skip=2 \
    --stream-count=1 --stream-to="$OUT/raw.yuyv"
v4l2-ctl -d /dev/video0 -c osd_text_mode=0
camroll snap -d 0 -f yuyv -r 640x480 --set osd_text_mode=2 -q 95 -o "$OUT/golden.jpg" --db "$OUT/catalog.sqlite3" \
    >"$OUT/snap.out" 2>"$OUT/snap.err"
echo $? >"$OUT/snap.rc"
