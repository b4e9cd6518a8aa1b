# Ctrl-C (SIGINT) and SIGTERM to camroll saving camera frames, at moments spread over the run.
i=0
for delay in 1.5 2 2.5 3 4; do
    i=$((i + 1))
    camroll snap -d 0 -r 320x180 -n 1000000 --stamp -o "$OUT/run$i/{seq}.jpg" --db "$OUT/catalog$i.sqlite3" \
        >"$OUT/run$i.out" 2>"$OUT/run$i.err" &
    pid=$!
    sleep $delay
    kill -INT $pid
    wait $pid
    echo $? >"$OUT/run$i.rc"
done
camroll snap -d 0 -r 320x180 --frames 100000 --interval 20ms -o "$OUT/term/{seq}.jpg" --db "$OUT/term.sqlite3" \
    >"$OUT/term.out" 2>"$OUT/term.err" &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
echo $? >"$OUT/term.rc"
