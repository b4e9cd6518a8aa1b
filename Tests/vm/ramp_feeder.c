/*
 * Test tool for the VM suite: a camera whose auto-exposure takes a while, played into a
 * v4l2loopback device as YUYV, one write() per frame, ~30 frames a second, until killed.
 *
 *   ramp-feeder DEVICE WIDTH HEIGHT TRIGGER RAMP_MS [swing]
 *
 * The picture (a checkerboard of luma level±20, so that it is not flat) stays dark (level 40)
 * until the file TRIGGER exists, then brightens linearly to level 180 over RAMP_MS milliseconds
 * (by the clock, however many frames a slow machine manages meanwhile) and stays there: what a
 * webcam shows in its first second of a dim room. A test touches TRIGGER as it starts camroll,
 * so that the ramp is under way when camroll starts streaming. With `swing`, the picture never
 * settles: from the trigger on, frames alternate between levels 60 and 180.
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

int main(int argc, char **argv) {
    if (argc != 6 && !(argc == 7 && strcmp(argv[6], "swing") == 0)) {
        fprintf(stderr, "usage: %s DEVICE WIDTH HEIGHT TRIGGER RAMP_MS [swing]\n", argv[0]);
        return 64;
    }
    int width = atoi(argv[2]), height = atoi(argv[3]), ramp_ms = atoi(argv[5]);
    const char *trigger = argv[4];
    int swing = argc == 7;
    if (width < 2 || height < 1 || ramp_ms < 1) return 64;

    int fd = open(argv[1], O_RDWR);
    if (fd < 0) { perror(argv[1]); return 66; }
    struct v4l2_format format = {0};
    format.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
    format.fmt.pix.width = width;
    format.fmt.pix.height = height;
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    format.fmt.pix.bytesperline = width * 2;
    format.fmt.pix.sizeimage = width * height * 2;
    if (ioctl(fd, VIDIOC_S_FMT, &format) != 0) { perror("VIDIOC_S_FMT"); return 74; }

    size_t size = (size_t)width * height * 2;
    unsigned char *frame = malloc(size);
    double triggered = -1;
    long frames = 0;
    struct timespec period = {0, 33 * 1000 * 1000};
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double ms = now.tv_sec * 1e3 + now.tv_nsec / 1e6;
        struct stat info;
        if (triggered < 0 && stat(trigger, &info) == 0) triggered = ms;
        double since = triggered < 0 ? -1 : ms - triggered;
        int level = since < 0 ? 40 : swing ? (frames % 2 ? 60 : 180)
                  : since >= ramp_ms ? 180 : 40 + (int)(140 * since / ramp_ms);
        frames++;
        for (int y = 0; y < height; y++) {
            unsigned char *row = frame + (size_t)y * width * 2;
            for (int x = 0; x < width; x += 2) {
                int luma = ((x / 32 + y / 32) % 2) ? level + 20 : level - 20;
                row[2 * x] = row[2 * x + 2] = (unsigned char)luma;
                row[2 * x + 1] = row[2 * x + 3] = 128;
            }
        }
        if (write(fd, frame, size) != (ssize_t)size) { perror("write"); return 74; }
        nanosleep(&period, NULL);
    }
}
