"""Screenshots as xwd(1) writes them (X's window dump: a big-endian header, a colour map, then
the pixels; 24-bit TrueColor at 32 bits a pixel here, as Xvfb's screen is): their colourfulness,
and whether two differ. In the guest (`python3 pixels.py saturation FILE [STEP]`: is the preview drawn?)
and in the host's check."""
import struct
import sys


def pixels(path):
    """(width, height, bytes per line, bytes per pixel, red/green/blue byte offsets, the pixels)."""
    data = open(path, "rb").read()
    fields = struct.unpack(">25I", data[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    byte_order, bits_per_pixel, bytes_per_line, colours = fields[7], fields[11], fields[12], fields[19]
    if bits_per_pixel != 32:
        raise ValueError(f"{path}: {bits_per_pixel} bits a pixel, not 32")
    offsets = (2, 1, 0) if byte_order == 0 else (1, 2, 3)  # LSBFirst: B G R x; MSBFirst: x R G B
    start = header_size + colours * 12
    return width, height, bytes_per_line, offsets, data[start:start + bytes_per_line * height]


def saturation(path, step=4):
    """The mean saturation (HSV's, 0 to 1) of every `step`th pixel of every `step`th row: ~0 for a
    grey window or a message on it, more for a camera's colour bars."""
    width, height, line, (r, g, b), data = pixels(path)
    total = count = 0
    for y in range(0, height, step):
        row = y * line
        for x in range(0, width, step):
            p = row + 4 * x
            high, low = max(data[p + r], data[p + g], data[p + b]), min(data[p + r], data[p + g], data[p + b])
            total += (high - low) / high if high else 0
            count += 1
    return total / count if count else 0.0


def differ(first, second):
    return pixels(first) != pixels(second)


if __name__ == "__main__":
    if sys.argv[1] == "saturation":
        print(f"{saturation(sys.argv[2], *map(int, sys.argv[3:4])):.3f}")
