#!/bin/sh
# Runs as a unit of the scenario's systemd (guest.sh): camroll@vm started (which returns once
# camroll says READY=1, after its first photo), watched for the watchdog's pings, stopped as
# `systemctl stop` stops it; what systemd, its journal and the catalog say, into $1.
out=$1
date +%s.%N >"$out/start_called"
systemctl start camroll@vm
echo $? >"$out/start.rc"
date +%s.%N >"$out/start_returned"
systemctl show camroll@vm -p ActiveState -p SubState -p Type -p WatchdogUSec -p WatchdogTimestampMonotonic >"$out/started.show"
sleep 4
systemctl show camroll@vm -p ActiveState -p WatchdogTimestampMonotonic -p NRestarts >"$out/running.show"
systemctl stop camroll@vm
echo $? >"$out/stop.rc"
systemctl show camroll@vm -p ActiveState -p SubState -p Result -p ExecMainCode -p ExecMainStatus >"$out/stopped.show"
systemctl is-failed camroll@vm >"$out/is-failed" 2>&1
journalctl -u camroll@vm -o short-monotonic --no-pager >"$out/journal" 2>&1
# DynamicUser's state directory, /var/lib/camroll: the catalog and the photos.
cp -r /var/lib/private/camroll "$out/state" 2>>"$out/driver.log"
systemctl poweroff
