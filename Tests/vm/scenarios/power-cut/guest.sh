# Power cut under a run: a card (ext4 with its journal, or FAT32 or exFAT as cards come, on a
# loop device in the guest's memory, through device-mapper) whose table is swapped mid-run for
# dm-flakey's drop_writes — from that moment the card keeps nothing, as when the power goes.
# camroll is stopped (SIGSTOP) just before the cut and killed after it; the card is unmounted
# with the writes still dropped, its buffers dropped too, and mounted again: what it holds is
# what reached it before the cut. With --fsync every save the catalog holds must be there,
# intact; without it saves may be lost, and verify must say which, and repair bring catalog
# and card into agreement.
. /scenarios/common.sh
tar -xf /dev/vdb -C /
for module in loop dm_mod dm_flakey crc32c_generic ext4 fat vfat exfat nls_cp437 nls_ascii nls_utf8 crc32_generic f2fs; do
    modprobe $module
done
export DM_DISABLE_UDEV=1
# 384 MB: F2FS keeps much of a small card for itself; on 128 MB its runs stopped at 5269 files
# and it wrote everything out, waiting for room, before the cut.
dd if=/dev/zero of=/tmp/disk bs=1M count=384 2>/dev/null
losetup /dev/loop0 /tmp/disk
sectors=$((384 * 2048))
echo "0 $sectors linear /dev/loop0 0" | dmsetup create card --noudevsync >"$OUT/dmsetup.out" 2>&1
echo $? >"$OUT/dmsetup.rc"
mkdir -p /mnt/card

# all_stopped PID: every thread of PID is stopped (T).
all_stopped() {
    for task in /proc/"$1"/task/*; do
        case $(cut -d' ' -f3 "$task/stat") in T | t) ;; *) return 1 ;; esac
    done
}

# new_card TYPE: the card made anew with a file system of TYPE, and mounted.
new_card() {
    case $1 in
        ext4) mkfs.ext4 -q -F /dev/dm-0 ;;
        vfat) mkfs.fat -F 32 /dev/dm-0 ;;
        exfat) mkfs.exfat /dev/dm-0 ;;
        f2fs) mkfs.f2fs -f /dev/dm-0 ;;
    esac >>"$OUT/mkfs.log" 2>&1
    mount -t "$1" /dev/dm-0 /mnt/card || { echo "cannot mount the card" >"$OUT/mount.err"; exit 1; }
}

# cut_power NAME: the power goes under the process started as NAME, which is stopped just
# before and killed after.
cut_power() {
    kill -STOP "$(pid_of "$1")"
    # Until every thread has stopped: one in fsync stops only when the fsync has returned.
    for _ in $(seq 1 200); do all_stopped "$(pid_of "$1")" && break; sleep 0.05; done
    # --nolockfs: no freeze, which would write out what the page cache holds.
    dmsetup suspend --nolockfs card
    echo "0 $sectors flakey /dev/loop0 0 0 1 1 drop_writes" | dmsetup load card
    dmsetup resume card
    kill -KILL "$(pid_of "$1")"
    finish "$1"
}

# power_back TYPE: the card unmounted with its writes still dropped, its buffers dropped too,
# the power back and the card mounted again: it holds what reached it before the cut.
power_back() {
    umount /mnt/card
    blockdev --flushbufs /dev/dm-0
    echo 3 >/proc/sys/vm/drop_caches
    dmsetup suspend --nolockfs card
    echo "0 $sectors linear /dev/loop0 0" | dmsetup load card
    dmsetup resume card
    mount -t "$1" /dev/dm-0 /mnt/card || { echo "cannot mount the card after the cut" >"$OUT/mount.err"; exit 1; }
}

# after_cut NAME CATALOG DIR: verify, repair and verify again; what DIR holds.
after_cut() {
    ls -la /mnt/card >"$OUT/$1-card.txt" 2>&1
    step "$1-verify" camroll verify --db "$2" --json
    step "$1-repair" camroll verify --repair --db "$2"
    step "$1-again" camroll verify --db "$2"
    ls -la "$3" >"$OUT/$1-ls.txt" 2>&1
    # Any case: after a cut FAT can show a synced file under its short name, 0000013.JPG (its
    # long-name entry, in the sector before, lost); the same file to FAT, found by either name.
    ls "$3" 2>/dev/null | grep -ci "\.jpg$" >"$OUT/$1-files"
    ls "$3" 2>/dev/null | grep -c "\.JPG$" >"$OUT/$1-capitals"
    ls -a "$3" 2>/dev/null | grep -c '^\.' >"$OUT/$1-hidden"
}

# power_cut NAME TYPE OPTIONS…: a run saving onto the card (a file system of TYPE, made anew),
# the power cut a second after its 150th file, the card back. With ON_CARD set, the catalog is
# on the card too (and copied off it at the end, as NAME.sqlite3, for the check).
# (Not $name: step sets it.)
power_cut() {
    run=$1 type=$2
    shift 2
    new_card "$type"
    catalog=$OUT/$run.sqlite3
    [ -n "$ON_CARD" ] && catalog=/mnt/card/catalog.sqlite3
    start "$run" camroll snap -d pattern -r 320x240 -n 1000000 "$@" -o "/mnt/card/$run/{seq}.jpg" \
        --db "$catalog" --no-progress
    wait_for_files "/mnt/card/$run" 150
    sleep 1  # the rows follow the files by a batch
    cut_power "$run"
    power_back "$type"
    after_cut "$run" "$catalog" "/mnt/card/$run"
    [ -n "$ON_CARD" ] && cp /mnt/card/catalog.sqlite3 "$OUT/$run.sqlite3"
    umount /mnt/card
}

# delete_cut: the power cut under `camroll delete` of a run on an ext4 card, catalog and all,
# after the journal has committed the unlinks so far (every 5 s): the rows a delete marks
# `deleting` before it unlinks their files must be on the card before the unlinks are.
delete_cut() {
    new_card ext4
    step delete-snap camroll snap -d pattern -r 320x240 -n 3000 -o /mnt/card/delete/{seq}.jpg \
        --db /mnt/card/catalog.sqlite3 --no-progress
    sync
    start delete camroll delete --run 1 --db /mnt/card/catalog.sqlite3
    for _ in $(seq 1 300); do [ "$(ls /mnt/card/delete | wc -l)" -le 2000 ] && break; sleep 0.1; done
    kill -STOP "$(pid_of delete)"
    sleep 6
    cut_power delete
    power_back ext4
    after_cut delete /mnt/card/catalog.sqlite3 /mnt/card/delete
    cp /mnt/card/catalog.sqlite3 "$OUT/delete.sqlite3"
    umount /mnt/card
}

power_cut fsync ext4 --fsync
power_cut cached ext4
power_cut fat_fsync vfat --fsync
power_cut fat_cached vfat
power_cut exfat_fsync exfat --fsync
power_cut exfat_cached exfat
power_cut jobs_fsync ext4 --fsync --jobs 2
power_cut direct_fsync ext4 --fsync --direct
power_cut f2fs_fsync f2fs --fsync
power_cut f2fs_cached f2fs
# The catalog on the card as well, as where a camera's card holds everything: with --fsync
# its rows are as lasting as the files; without, the run's row is, for repair to find them.
ON_CARD=1 power_cut card_fsync ext4 --fsync
ON_CARD=1 power_cut card_fat_fsync vfat --fsync
ON_CARD=1 power_cut card_exfat_fsync exfat --fsync
ON_CARD=1 power_cut card_cached ext4
ON_CARD=1 power_cut card_fat_cached vfat
delete_cut
dmsetup remove card
