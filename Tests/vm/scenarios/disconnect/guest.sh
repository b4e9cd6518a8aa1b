# vivid's 'disconnect' control: the camera goes away in the middle of a run.
. /scenarios/common.sh
start run camroll snap -d 0 -r 320x180 --frames 1000 --interval 100ms -o "$OUT/run/{seq}.jpg" --db "$OUT/catalog.sqlite3"
wait_for_files "$OUT/run" 3
v4l2-ctl -d /dev/video0 -c disconnect=1
finish run
