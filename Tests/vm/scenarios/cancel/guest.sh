# Ctrl-C (SIGINT) and SIGTERM to camroll saving camera frames, at moments spread over the run
# (counted from its first saved file, so that a slow start-up does not decide the outcome).
wait_for_first_file() {
    for _ in $(seq 1 300); do [ -n "$(ls "$1" 2>/dev/null)" ] && return; sleep 0.1; done
}
i=0
for delay in 0 0.3 0.7 1.2 2; do
    i=$((i + 1))
    camroll snap -d 0 -r 320x180 -n 1000000 --stamp -o "$OUT/run$i/{seq}.jpg" --db "$OUT/catalog$i.sqlite3" \
        >"$OUT/run$i.out" 2>"$OUT/run$i.err" &
    pid=$!
    wait_for_first_file "$OUT/run$i"
    sleep $delay
    kill -INT $pid
    wait $pid
    echo $? >"$OUT/run$i.rc"
done
camroll snap -d 0 -r 320x180 --frames 100000 --interval 20ms -o "$OUT/term/{seq}.jpg" --db "$OUT/term.sqlite3" \
    >"$OUT/term.out" 2>"$OUT/term.err" &
pid=$!
wait_for_first_file "$OUT/term"
sleep 1
kill -TERM $pid
wait $pid
echo $? >"$OUT/term.rc"
