# Ctrl-C (SIGINT) and SIGTERM to camroll saving camera frames, at moments spread over the run
# (counted from its first saved file, so that a slow start-up does not decide the outcome).
. /scenarios/common.sh
i=0
for delay in 0 0.3 0.7 1.2 2; do
    i=$((i + 1))
    start run$i camroll snap -d 0 -r 320x180 -n 1000000 --stamp -o "$OUT/run$i/{seq}.jpg" --db "$OUT/catalog$i.sqlite3"
    wait_for_files "$OUT/run$i" 1
    sleep $delay
    kill -INT "$(pid_of run$i)"
    finish run$i
done
start term camroll snap -d 0 -r 320x180 --frames 100000 --interval 20ms -o "$OUT/term/{seq}.jpg" --db "$OUT/term.sqlite3"
wait_for_files "$OUT/term" 1
sleep 1
kill -TERM "$(pid_of term)"
finish term
