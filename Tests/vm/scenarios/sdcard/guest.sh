# SD cards and USB sticks as they come: FAT32, FAT16 and exFAT through the kernel's own drivers
# (vfat, exfat), each a loop device on a file in the guest's memory. On each: saves, a name
# saved twice refused (also in another case: FAT's names ignore it), two jobs, SIGKILL and
# repair, a name FAT refuses, --fill to the end, verify, and fsck of the card afterwards. Then the FAT16 root
# directory, which holds 512 names whatever the space left: not a full card; and a fill of a
# FAT16 card with a directory for every 500 photos, which is. Then FAT32 and exFAT cards that
# keep their own catalog, filled and then full, and overrun by a run that is not a fill. Last,
# FAT32 cards pulled out mid-run, without and with the catalog on them.
. /scenarios/common.sh
tar -xf /dev/vdb -C /
for module in loop dm_mod fat vfat exfat nls_cp437 nls_utf8 nls_ascii; do modprobe $module; done
camroll snap -d pattern -r 1920x1080 -q 97 -o /tmp/photo.jpg --db /tmp/photo.sqlite3 --quiet

# card NAME LOOP MIB MKFS… : a fresh card mounted on /mnt/NAME; stops the scenario if it cannot
# be mounted (a fill of the guest's memory instead would prove nothing).
card() {
    name=$1 loop=$2 mib=$3
    shift 3
    dd if=/dev/zero of="/tmp/$name.img" bs=1M count="$mib" 2>/dev/null
    losetup "$loop" "/tmp/$name.img"
    "$@" "$loop" >>"$OUT/mkfs.log" 2>&1
    mkdir -p "/mnt/$name"
    case $name in exfat*) type=exfat ;; *) type=vfat ;; esac
    mount -t $type "$loop" "/mnt/$name" || { echo "cannot mount $name" >"$OUT/mount.err"; exit 1; }
    grep " /mnt/$name " /proc/mounts >>"$OUT/mounts"
}

# on_card NAME: the checks every card gets.
on_card() {
    card=/mnt/$1 db=$OUT/$1.sqlite3
    step "$1-snap" camroll snap -d pattern -r 320x240 -n 10 -o "$card/{seq}.jpg" --db "$db" --no-progress
    step "$1-again" camroll snap -d pattern -r 320x240 -n 10 -o "$card/{seq}.jpg" --db "$db" --no-progress
    step "$1-jobs" camroll snap -d pattern -r 320x240 -n 40 --jobs 2 -o "$card/jobs/{seq}.jpg" --db "$db" --no-progress
    # Killed mid-run: repair records what was renamed into place and removes the temporary file.
    start "${1}_killed" camroll snap -d pattern -r 320x240 -n 1000000 -o "$card/killed/{seq}.jpg" --db "$db" --no-progress
    wait_for_files "$card/killed" 50
    kill -KILL "$(pid_of "${1}_killed")"
    finish "${1}_killed"
    step "$1-repair-killed" camroll verify --repair --db "$db"
    step "$1-colon" camroll snap -d pattern -r 320x240 -o "$card/a:b.jpg" --db "$db" --no-progress
    step "$1-upper" camroll snap -d pattern -r 320x240 -o "$card/Case.jpg" --db "$db" --no-progress
    step "$1-lower" camroll snap -d pattern -r 320x240 -o "$card/case.jpg" --db "$db" --no-progress
    step "$1-lower-overwrite" camroll snap -d pattern -r 320x240 -q 50 -o "$card/case.jpg" --overwrite --db "$db" --no-progress
    ls "$card" >"$OUT/$1-ls.txt"
    # The same 1080p photo of ~50 kB each time (stamped): a fill of about a thousand files in
    # seconds, where encoding a pattern photo for each would take minutes under TCG.
    step "$1-fill" camroll snap -d file:/tmp/photo.jpg --fill -o "$card/fill/{seq}.jpg" --db "$db" --no-progress
    df -k "$card" | tail -1 >"$OUT/$1-df.txt"
    find "$card" -type f -name '*.jpg' | wc -l >"$OUT/$1-files"
    find "$card" -type f ! -name '*.jpg' >"$OUT/$1-others"
    step "$1-verify" camroll verify --db "$db" --json
    step "$1-repair" camroll verify --repair --db "$db"
    umount "$card"
    step "$1-fsck" "fsck.$2" -n "$3"
}

card fat32 /dev/loop0 48 mkfs.fat -F 32 -n FAT32
on_card fat32 fat /dev/loop0
card exfat /dev/loop1 48 mkfs.exfat -L EXFAT
on_card exfat exfat /dev/loop1

# FAT16's root directory is a fixed table of 512 entries (a long name takes several). Saving
# small files there runs out of entries long before space: that is not the card being full.
card fat16 /dev/loop2 32 mkfs.fat -F 16 -n FAT16
step fat16-root-fill camroll snap -d pattern -r 160x120 --fill -n 2000 -o '/mnt/fat16/{seq}.jpg' --db "$OUT/fat16.sqlite3" --no-progress
step fat16-root-many camroll snap -d pattern -r 160x120 -n 2000 -o '/mnt/fat16/many-{seq}.jpg' --db "$OUT/fat16.sqlite3" --no-progress
df -k /mnt/fat16 | tail -1 >"$OUT/fat16-df.txt"
find /mnt/fat16 -type f -name '*.jpg' | wc -l >"$OUT/fat16-files"
find /mnt/fat16 -type f ! -name '*.jpg' >"$OUT/fat16-others"
step fat16-verify camroll verify --db "$OUT/fat16.sqlite3" --json
umount /mnt/fat16
step fat16-fsck fsck.fat -n /dev/loop2

# What the error's hint says to do: a directory for every 500 photos; the fill then reaches the
# end of the card.
card grouped /dev/loop3 32 mkfs.fat -F 16 -n GROUPED
step grouped-fill camroll snap -d pattern -r 160x120 --fill -o '/mnt/grouped/{seq/500}/{seq}.jpg' --db "$OUT/grouped.sqlite3" --no-progress
df -k /mnt/grouped | tail -1 >"$OUT/grouped-df.txt"
find /mnt/grouped -type f -name '*.jpg' | wc -l >"$OUT/grouped-files"
ls /mnt/grouped >"$OUT/grouped-directories"
find /mnt/grouped -type f ! -name '*.jpg' >"$OUT/grouped-others"
step grouped-verify camroll verify --db "$OUT/grouped.sqlite3" --json
umount /mnt/grouped
step grouped-fsck fsck.fat -n /dev/loop3

# Cards that keep their own record (the catalog on the card): a fill beside the catalog, then
# the rest of the card taken by something else. The full card's catalog is still verified and
# listed; delete, which must write a row first, says there is no room and deletes nothing.
# Then a run that is not a fill overruns the card.
beside() {
    card=/mnt/$1 db=/mnt/$1/catalog.sqlite3
    step "$1-fill" camroll snap -d file:/tmp/photo.jpg --fill -o "$card/fill/{seq}.jpg" --db "$db" --no-progress
    df -k "$card" | tail -1 >"$OUT/$1-df-after-fill.txt"
    dd if=/dev/zero of="$card/rest" bs=4k 2>/dev/null
    df -k "$card" | tail -1 >"$OUT/$1-df.txt"
    ls -a "$card" >"$OUT/$1-ls.txt"
    find "$card/fill" -type f | wc -l >"$OUT/$1-files"
    step "$1-verify" camroll verify --db "$db" --json
    step "$1-list" camroll list --db "$db" --json
    step "$1-delete" camroll delete --run 1 --db "$db"
    find "$card/fill" -type f | wc -l >"$OUT/$1-files-after"
    for f in "$db" "$db-wal"; do if [ -f "$f" ]; then cp "$f" "$OUT/$1.sqlite3${f#"$db"}"; fi; done
    # Room made, the fill deleted; then a run of more photos than the card holds, which is not
    # a fill: it fails with the card full, every file it saved recorded, and what is left of the
    # room it kept for the catalog lets the next command (delete) write its rows.
    rm "$card/rest"
    step "$1-delete-fill" camroll delete --run 1 --db "$db"
    step "$1-overrun" camroll snap -d file:/tmp/photo.jpg -n 100000 -o "$card/run/{seq}.jpg" --db "$db" --no-progress
    df -k "$card" | tail -1 >"$OUT/$1-overrun-df.txt"
    find "$card/run" -type f | wc -l >"$OUT/$1-overrun-files"
    step "$1-overrun-list" camroll list --db "$db" --json
    step "$1-overrun-verify" camroll verify --db "$db" --json
    step "$1-overrun-delete" camroll delete --run 2 --db "$db"
    find "$card/run" -type f | wc -l >"$OUT/$1-overrun-files-after"
    umount "$card"
    step "$1-fsck" "fsck.$2" -n "$3"
}

card fat32beside /dev/loop6 48 mkfs.fat -F 32 -n BESIDE
beside fat32beside fat /dev/loop6
card exfatbeside /dev/loop7 48 mkfs.exfat -L BESIDE
beside exfatbeside exfat /dev/loop7

# A card pulled out mid-run: under the mounted FAT32 its device turns to I/O errors
# (device-mapper's error target in place of the linear one). With --fsync each save is on the
# card before it counts. The run stops with one error; the files saved before are recorded; the
# next run and verify say what is wrong.
dd if=/dev/zero of=/tmp/pulled.img bs=1M count=48 2>/dev/null
losetup /dev/loop4 /tmp/pulled.img
sectors=$((48 * 2048))
echo "0 $sectors linear /dev/loop4 0" | DM_DISABLE_UDEV=1 dmsetup create pulled --noudevsync >>"$OUT/dmsetup.log" 2>&1
mkfs.fat -F 32 /dev/dm-0 >>"$OUT/mkfs.log" 2>&1
mkdir -p /mnt/pulled
mount -t vfat /dev/dm-0 /mnt/pulled || { echo "cannot mount pulled" >"$OUT/mount.err"; exit 1; }
start pulled camroll snap -d pattern -r 320x240 -n 100000 --fsync -o '/mnt/pulled/{seq}.jpg' --db "$OUT/pulled.sqlite3" --no-progress
wait_for_files /mnt/pulled 20
dmsetup suspend --nolockfs --noflush pulled >>"$OUT/dmsetup.log" 2>&1
echo "0 $sectors error" | dmsetup load pulled >>"$OUT/dmsetup.log" 2>&1
dmsetup resume pulled >>"$OUT/dmsetup.log" 2>&1
finish pulled
step pulled-again camroll snap -d pattern -r 320x240 -n 5 --fsync -o '/mnt/pulled/again-{seq}.jpg' --db "$OUT/pulled.sqlite3" --no-progress
# Without --fsync a save counts once the kernel has it: on the dead card some may "succeed" in
# the page cache. verify then finds them unreadable with the rest.
step pulled-cached camroll snap -d pattern -r 320x240 -n 5 -o '/mnt/pulled/cached-{seq}.jpg' --db "$OUT/pulled.sqlite3" --no-progress
step pulled-verify camroll verify --db "$OUT/pulled.sqlite3" --json
dmesg | grep -i -E "fat|I/O error" | tail -5 >"$OUT/pulled-dmesg.txt"
umount -l /mnt/pulled

# The same with the catalog on the card too: whichever fails first, one error and no crash.
dd if=/dev/zero of=/tmp/pulled2.img bs=1M count=48 2>/dev/null
losetup /dev/loop5 /tmp/pulled2.img
echo "0 $sectors linear /dev/loop5 0" | DM_DISABLE_UDEV=1 dmsetup create pulled2 --noudevsync >>"$OUT/dmsetup.log" 2>&1
mkfs.fat -F 32 /dev/dm-1 >>"$OUT/mkfs.log" 2>&1
mkdir -p /mnt/pulled2
mount -t vfat /dev/dm-1 /mnt/pulled2 || { echo "cannot mount pulled2" >"$OUT/mount.err"; exit 1; }
start pulled2 camroll snap -d pattern -r 320x240 -n 100000 -o '/mnt/pulled2/{seq}.jpg' --db /mnt/pulled2/catalog.sqlite3 --no-progress
wait_for_files /mnt/pulled2 40
dmsetup suspend --nolockfs --noflush pulled2 >>"$OUT/dmsetup.log" 2>&1
echo "0 $sectors error" | dmsetup load pulled2 >>"$OUT/dmsetup.log" 2>&1
dmsetup resume pulled2 >>"$OUT/dmsetup.log" 2>&1
finish pulled2
step pulled2-verify camroll verify --db /mnt/pulled2/catalog.sqlite3
umount -l /mnt/pulled2
