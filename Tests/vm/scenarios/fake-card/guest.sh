# A fake-capacity card, built with device-mapper: a 64 MiB disk (a loop device on a file in the
# guest's memory) that claims 128 MiB, its second half mapped back onto its first half, as a
# counterfeit card wraps writes past its real capacity. camroll fills it and verifies; then, on
# the same card made anew, f3write and f3read. Both should find data overwritten, and camroll
# the real capacity. Last, --direct where this kernel refuses O_DIRECT (tmpfs before 6.6): one
# warning, then the page cache.
. /scenarios/common.sh
tar -xf /dev/vdb -C /
modprobe loop
modprobe dm_mod
modprobe crc32c_generic
modprobe ext4
real_mib=64
echo $((real_mib * 1024 * 1024)) >"$OUT/real_bytes"
dd if=/dev/zero of=/tmp/disk bs=1M count=$real_mib 2>/dev/null
losetup /dev/loop0 /tmp/disk
sectors=$((real_mib * 2048))
printf '0 %d linear /dev/loop0 0\n%d %d linear /dev/loop0 0\n' $sectors $sectors $sectors >"$OUT/table"
DM_DISABLE_UDEV=1 dmsetup create fake --noudevsync "$OUT/table" >"$OUT/dmsetup.out" 2>&1
echo $? >"$OUT/dmsetup.rc"
blockdev_bytes=$(($(cat /sys/block/dm-0/size) * 512))
echo "$blockdev_bytes" >"$OUT/claimed_bytes"

# A fresh file system on the whole claimed size; no journal (as on the FAT of most cards, and
# so that the journal's own writes do not land on the files), no blocks reserved for root.
# Stops the scenario when the card cannot be mounted: a fill of the guest's own memory instead
# would prove nothing.
new_card() {
    mkfs.ext4 -q -F -b 4096 -m 0 -O ^has_journal -E nodiscard /dev/dm-0 >>"$OUT/mkfs.log" 2>&1
    mkdir -p /mnt/card
    mount -t ext4 /dev/dm-0 /mnt/card || { echo "cannot mount the card" >"$OUT/mount.err"; exit 1; }
}

new_card
step fill camroll snap -d pattern -r 640x480 --fill -o '/mnt/card/{seq}.jpg' --db "$OUT/catalog.sqlite3" --no-progress
df -k /mnt/card >"$OUT/df.txt"
ls /mnt/card | grep -c "\.jpg$" >"$OUT/files"
ls -a /mnt/card | grep -c '^\.' >"$OUT/hidden"
step verify camroll verify --db "$OUT/catalog.sqlite3"
step verify-json camroll verify --db "$OUT/catalog.sqlite3" --json
umount /mnt/card

new_card
step f3write f3write /mnt/card
step f3read f3read /mnt/card
umount /mnt/card
dmsetup remove fake

step direct camroll snap -d pattern -r 320x240 -n 20 --direct --jobs 2 -o '/tmp/direct/{seq}.jpg' --db "$OUT/direct.sqlite3"
step direct-verify camroll verify --db "$OUT/direct.sqlite3"
