# vivid's 'disconnect' control: the camera goes away in the middle of a run.
camroll snap -d 0 -r 320x180 --frames 1000 --interval 100ms -o "$OUT/run/{seq}.jpg" --db "$OUT/catalog.sqlite3" \
    >"$OUT/run.out" 2>"$OUT/run.err" &
run=$!
for _ in $(seq 1 100); do [ "$(ls "$OUT/run" 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.1; done
v4l2-ctl -d /dev/video0 -c disconnect=1
wait $run
echo $? >"$OUT/run.rc"
