# camroll against vivid as a webcam: discovery, formats, check, controls, snap at two sizes and
# with the default device.
. /scenarios/common.sh

step devices camroll devices
step devices-json camroll devices --json
step formats camroll formats -d /dev/video0
step check camroll check -d /dev/video0
step check-null camroll check -d /dev/null
step check-missing camroll check -d /dev/video7
step controls camroll controls -d 0
step snap-vga camroll snap -d /dev/video0 -r 640x480 -n 5 -o "$OUT/vga/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step snap-hd camroll snap -d 0 -r 1920x1080 -n 5 -o "$OUT/hd/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step snap-default camroll snap -r 320x180 --frames 3 --interval 100ms -o "$OUT/default/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step snap-nv12 camroll snap -d 0 -f nv12 -r 640x360 -o "$OUT/nv12/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step snap-mjpeg camroll snap -d 0 -f mjpeg -r 640x480 -o "$OUT/asked-mjpeg/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step set-bad camroll snap -d 0 --set no_such_control=1 -o "$OUT/bad/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step set-range camroll snap -d 0 --set brightness=999 -o "$OUT/bad/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step set-ok camroll snap -d 0 -r 320x180 --set brightness=200 -o "$OUT/bright/{seq}.jpg" --db "$OUT/catalog.sqlite3"
v4l2-ctl -d /dev/video0 -C brightness >"$OUT/brightness-after.txt" 2>&1
# A stable name, as udev's 60-persistent-v4l.rules would make it (no udev in this VM).
mkdir -p /dev/v4l/by-id && ln -s ../../video0 /dev/v4l/by-id/platform-vivid-video-index0
step devices-byid camroll devices
step snap-byid camroll snap -d platform-vivid-video-index0 -r 320x180 -o "$OUT/byid/{seq}.jpg" --db "$OUT/catalog.sqlite3"
# Frames taken after a pause are fresh, not the ones queued when it began.
step interval camroll snap -d 0 -r 640x480 --frames 3 --interval 1s -o "$OUT/interval/{seq}.jpg" --db "$OUT/interval.sqlite3"
# Frames that waited in the driver's queue through a pause: each dated by its buffer's timestamp
# (when vivid made it), not by when camroll dequeued it, 100 ms and more later.
step times camroll snap -d 0 -r 320x180 --fps 25 --frames 5 --interval 100ms -o "$OUT/times/{seq}.jpg" --db "$OUT/times.sqlite3"
date -u +%s >"$OUT/times-now.txt"
# A size vivid does not have: the driver picks another, camroll says so and saves what it got.
step odd-size camroll snap -d 0 -r 1000x700 -o "$OUT/odd/{seq}.jpg" --db "$OUT/catalog.sqlite3"
# -o -: the camera's JPEG to standard output, recorded without a save.
step stdout camroll snap -d 0 -r 640x480 -o - --db "$OUT/stdout.sqlite3"
