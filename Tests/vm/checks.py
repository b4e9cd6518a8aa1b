"""Host-side helpers for the VM scenarios' checks: files, exit codes, JPEG decoding (djpeg),
EXIF (exiftool), the catalog (sqlite3) and digests (xxhsum -H2)."""
import json
import os
import sqlite3
import subprocess
import sys

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def finish():
    if failures:
        sys.exit(1)
    print("all checks passed")


def read(out, name):
    path = os.path.join(out, name)
    return open(path, errors="replace").read() if os.path.exists(path) else ""


def rc(out, name):
    """The exit status the guest recorded for step `name`."""
    text = read(out, name + ".rc").strip()
    return int(text) if text.lstrip("-").isdigit() else None


def decode(path):
    """A JPEG decoded by djpeg (libjpeg-turbo) → (width, height, RGB bytes); None if broken."""
    result = subprocess.run(["djpeg", "-pnm", path], capture_output=True)
    if result.returncode != 0 or result.stderr:
        return None
    data = result.stdout
    parts, offset = [], 0
    while len(parts) < 4:  # P6 width height maxval, then one whitespace byte
        while data[offset:offset + 1].isspace():
            offset += 1
        start = offset
        while not data[offset:offset + 1].isspace():
            offset += 1
        parts.append(data[start:offset])
    if parts[0] != b"P6":
        return None
    return int(parts[1]), int(parts[2]), data[offset + 1:]


def exif(path):
    """The picture's metadata as exiftool reads it (numbers as numbers); {} if it cannot."""
    result = subprocess.run(["exiftool", "-json", "-n", path], capture_output=True, text=True)
    try:
        return json.loads(result.stdout)[0]
    except (ValueError, IndexError):
        return {}


def check_exif(path, model, width, height):
    """exiftool finds the time, the camera, the software and the size in it."""
    tags = exif(path)
    name = os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)
    expect(str(tags.get("DateTimeOriginal", "")).count(":") == 4, f"{name}: DateTimeOriginal {tags.get('DateTimeOriginal')}")
    expect(tags.get("Model") == model, f"{name}: Model {tags.get('Model')!r}, expected {model!r}")
    expect(str(tags.get("Software", "")).startswith("camroll 0."), f"{name}: Software {tags.get('Software')!r}")
    expect((tags.get("ExifImageWidth"), tags.get("ExifImageHeight")) == (width, height),
           f"{name}: EXIF size {tags.get('ExifImageWidth')}x{tags.get('ExifImageHeight')}, expected {width}x{height}")
    return tags


def without_exif(data):
    """A JPEG's bytes without the APP1 EXIF segment camroll inserts (after SOI and any APP0)."""
    offset = 2
    while data[offset:offset + 1] == b"\xff" and offset + 4 <= len(data):
        marker = data[offset + 1]
        length = data[offset + 2] << 8 | data[offset + 3]
        if marker == 0xE1 and data[offset + 4:offset + 10] == b"Exif\0\0":
            return data[:offset] + data[offset + 2 + length:]
        if marker != 0xE0:
            break
        offset += 2 + length
    return data


def xxhsum(paths):
    out = subprocess.run(["xxhsum", "-H2"] + list(paths), capture_output=True, text=True, check=True).stdout
    return {line.split(None, 1)[1].strip(): line.split()[0] for line in out.splitlines() if line.strip()}


def catalog(out, name="catalog.sqlite3"):
    return sqlite3.connect(os.path.join(out, name))


def check_saves(out, db, guest_dir, expected, width=None, height=None):
    """Every `saved` row's file (the guest's path, mapped to the host) exists, decodes at the
    right size, and has the digest the row records; and there are `expected` of them."""
    rows = db.execute("SELECT path, xxh128, bytes FROM saves WHERE status='saved' ORDER BY id").fetchall()
    rows = [r for r in rows if r[0].startswith("/out/" + guest_dir + "/")]
    expect(len(rows) == expected, f"{guest_dir}: {len(rows)} saved rows, expected {expected}")
    host_paths = [os.path.join(out, r[0][len("/out/"):]) for r in rows]
    on_disk = sorted(os.listdir(os.path.join(out, guest_dir))) if os.path.isdir(os.path.join(out, guest_dir)) else []
    expect(len(on_disk) == expected, f"{guest_dir}: {len(on_disk)} files on disk, expected {expected}: {on_disk[:5]}")
    digests = xxhsum([p for p in host_paths if os.path.exists(p)]) if host_paths else {}
    for (guest_path, digest, size), path in zip(rows, host_paths):
        if not expect(os.path.exists(path), f"{guest_path} is recorded but missing"):
            continue
        expect(digests.get(path) == digest, f"{guest_path}: xxh128 differs from xxhsum -H2")
        expect(os.path.getsize(path) == size, f"{guest_path}: size differs from the row")
        image = decode(path)
        if expect(image is not None, f"{guest_path} does not decode"):
            if width:
                expect((image[0], image[1]) == (width, height),
                       f"{guest_path} is {image[0]}x{image[1]}, expected {width}x{height}")
    return rows
