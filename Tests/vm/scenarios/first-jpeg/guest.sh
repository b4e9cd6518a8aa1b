# Time to the first JPEG (a benchmark, run by `make vm-bench`): in one boot, alternating, 10
# reps each — camroll (the default warm-up, --skip auto; --skip 5, the default before it; and
# --skip 0), fswebcam -S 0, ffmpeg -frames:v 1, the raw v4l2-ctl grab (also through libv4l2),
# a C program that grabs and encodes one JPEG (grab-jpeg) and records it in a catalog as camroll
# does (grab-jpeg-catalog), and camroll-baseline --skip 0
# where CAMROLL_VM_BASELINE put one in the guest — at 640x480 and 1920x1080;
# then 100 copies of one 1080p capture. Every run is one line of $OUT/times: "TOOL SIZE REP MS
# STATUS RSS_KB". The check prints the table.
tar -xf /dev/vdb -C /
mkdir -p /tmp/o
# grab-jpeg's catalog, made by camroll (its schema), before anything is timed.
camroll snap -d pattern -r 64x48 -o /tmp/o/p.jpg --db /tmp/g.db --quiet
: >"$OUT/times"
measure() {  # measure TOOL SIZE REP COMMAND...
    tool=$1 size=$2 rep=$3
    shift 3
    set -- $(timeit x "$@")
    echo "$tool $size $rep $2 $3 $4" >>"$OUT/times"
}
for size in 640x480 1920x1080; do
    w=${size%x*} h=${size#*x}
    for rep in 1 2 3 4 5 6 7 8 9 10; do
        measure camroll $size $rep camroll snap -d /dev/video0 -r $size -o /tmp/o/c.jpg --overwrite --db /tmp/c.db --quiet
        measure camroll-skip5 $size $rep camroll snap -d /dev/video0 -r $size --skip 5 -o /tmp/o/c5.jpg --overwrite --db /tmp/c.db --quiet
        measure camroll-skip0 $size $rep camroll snap -d /dev/video0 -r $size --skip 0 -o /tmp/o/c0.jpg --overwrite --db /tmp/c.db --quiet
        # CAMROLL_VM_BASELINE: camroll before a change, timed right after it, in this boot.
        if [ -x /usr/bin/camroll-baseline ]; then
            measure baseline-skip0 $size $rep camroll-baseline snap -d /dev/video0 -r $size --skip 0 -o /tmp/o/b0.jpg \
                --overwrite --db /tmp/b.db --quiet
        fi
        measure fswebcam $size $rep fswebcam -q -d /dev/video0 -r $size -p YUYV -S 0 --no-banner --jpeg 90 /tmp/o/f.jpg
        measure ffmpeg $size $rep ffmpeg -nostdin -loglevel error -y -f v4l2 -video_size $size -i /dev/video0 -frames:v 1 /tmp/o/ff.jpg
        measure raw $size $rep v4l2-ctl -d /dev/video0 --set-fmt-video=width=$w,height=$h,pixelformat=YUYV \
            --stream-mmap --stream-count=1 --stream-to=/tmp/o/raw.yuv
        # The same grab through libv4l2 (-w): what opening a camera through it costs (camroll does
        # only for formats it does not read itself).
        measure raw-libv4l2 $size $rep v4l2-ctl -w -d /dev/video0 --set-fmt-video=width=$w,height=$h,pixelformat=YUYV \
            --stream-mmap --stream-count=1 --stream-to=/tmp/o/raw.yuv
        # The least a program can do for one JPEG (Tests/vm/grab_jpeg.c): the floor under camroll.
        measure grab-jpeg $size $rep grab-jpeg /dev/video0 $w $h /tmp/o/g.jpg
        # That, and the photo recorded in a catalog as camroll records it: the floor under a tool
        # that keeps a record of what it saved.
        measure grab-jpeg-catalog $size $rep grab-jpeg /dev/video0 $w $h /tmp/o/gc.jpg /tmp/g.db
    done
    cp /tmp/o/c.jpg "$OUT/camroll-$size.jpg"; cp /tmp/o/c5.jpg "$OUT/camroll-skip5-$size.jpg"
    cp /tmp/o/c0.jpg "$OUT/camroll-skip0-$size.jpg"
    cp /tmp/o/f.jpg "$OUT/fswebcam-$size.jpg"; cp /tmp/o/ff.jpg "$OUT/ffmpeg-$size.jpg"
    cp /tmp/o/g.jpg "$OUT/grab-jpeg-$size.jpg"; cp /tmp/o/gc.jpg "$OUT/grab-jpeg-catalog-$size.jpg"
    if [ -f /tmp/o/b0.jpg ]; then cp /tmp/o/b0.jpg "$OUT/baseline-skip0-$size.jpg"; fi
done
# Where camroll's time goes, at each size (--skip 0).
for size in 640x480 1920x1080; do
    CAMROLL_TRACE=1 camroll snap -d /dev/video0 -r $size --skip 0 -o /tmp/o/t.jpg --overwrite --db /tmp/c.db --quiet \
        2>"$OUT/trace-$size.txt"
    if [ -x /usr/bin/camroll-baseline ]; then
        CAMROLL_TRACE=1 camroll-baseline snap -d /dev/video0 -r $size --skip 0 -o /tmp/o/t.jpg --overwrite --db /tmp/b.db \
            --quiet 2>"$OUT/baseline-trace-$size.txt"
    fi
done
# 100 copies of one 1080p capture: camroll -n 100; fswebcam with 100 output names in one run;
# one ffmpeg grab and 100 cp.
rm -rf /tmp/o/*
measure camroll-100 1920x1080 1 camroll snap -d /dev/video0 -r 1920x1080 --skip 0 -n 100 -o '/tmp/o/c{seq}.jpg' --db /tmp/c.db --quiet
names=$(for i in $(seq 1 100); do printf '/tmp/o/f%s.jpg ' "$i"; done)
# shellcheck disable=SC2086 # one word per name
measure fswebcam-100 1920x1080 1 fswebcam -q -d /dev/video0 -r 1920x1080 -p YUYV -S 0 --no-banner --jpeg 90 $names
measure ffmpeg-cp-100 1920x1080 1 sh -c 'ffmpeg -nostdin -loglevel error -y -f v4l2 -video_size 1920x1080 -i /dev/video0 -frames:v 1 /tmp/o/ff.jpg && for i in $(seq 1 100); do cp /tmp/o/ff.jpg /tmp/o/ff$i.jpg; done'
ls /tmp/o | wc -l >"$OUT/copies.count"
cp /tmp/o/c100.jpg /tmp/o/f100.jpg /tmp/o/ff100.jpg "$OUT/" 2>/dev/null
ls -l /usr/bin/camroll >"$OUT/binary.txt"
camroll list --db /tmp/g.db --limit 100 >"$OUT/grab-jpeg-catalog.txt"
true
