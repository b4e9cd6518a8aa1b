/*
 * Test tool for the VM suite: plays one JPEG into a v4l2loopback device as an MJPEG camera
 * would, one write() per frame, ~30 frames a second, until killed.
 *
 *   mjpeg-feeder DEVICE WIDTH HEIGHT MODE FILE.jpg
 *
 * MODE: keep   — frames as they are (with Huffman tables);
 *       strip  — Huffman tables (DHT segments) removed, as UVC cameras send frames;
 *       mixed  — alternately a frame cut in half (no end-of-image marker) and a stripped one.
 */
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Removes every DHT segment before the start of scan; returns the new length. */
static size_t strip_dht(unsigned char *jpeg, size_t length) {
    size_t in = 2, out = 2;
    while (in + 4 <= length && jpeg[in] == 0xFF) {
        unsigned marker = jpeg[in + 1];
        size_t segment = 2 + ((size_t)jpeg[in + 2] << 8 | jpeg[in + 3]);
        if (marker == 0xDA) break;
        if (marker != 0xC4) {
            memmove(jpeg + out, jpeg + in, segment);
            out += segment;
        }
        in += segment;
    }
    memmove(jpeg + out, jpeg + in, length - in);
    return out + (length - in);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s DEVICE WIDTH HEIGHT keep|strip|mixed FILE.jpg\n", argv[0]);
        return 64;
    }
    const char *mode = argv[4];
    FILE *file = fopen(argv[5], "rb");
    if (!file) { perror(argv[5]); return 66; }
    unsigned char *frame = malloc(16 << 20);
    size_t length = fread(frame, 1, 16 << 20, file);
    fclose(file);
    if (strcmp(mode, "keep") != 0) length = strip_dht(frame, length);

    int fd = open(argv[1], O_RDWR);
    if (fd < 0) { perror(argv[1]); return 66; }
    struct v4l2_format format = {0};
    format.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    format.fmt.pix.width = atoi(argv[2]);
    format.fmt.pix.height = atoi(argv[3]);
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_MJPEG;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    format.fmt.pix.sizeimage = format.fmt.pix.width * format.fmt.pix.height * 2;
    if (ioctl(fd, VIDIOC_S_FMT, &format) != 0) { perror("VIDIOC_S_FMT"); return 74; }

    struct timespec pause = {0, 33 * 1000 * 1000};
    for (unsigned long n = 0;; n++) {
        size_t size = (strcmp(mode, "mixed") == 0 && n % 2 == 0) ? length / 2 : length;
        if (write(fd, frame, size) < 0) { perror("write"); return 74; }
        nanosleep(&pause, NULL);
    }
}
