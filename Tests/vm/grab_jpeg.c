/*
 * grab-jpeg DEVICE WIDTH HEIGHT OUTPUT.jpg: the least a program can do for one JPEG from a V4L2
 * camera, as the floor under `camroll snap --skip 0` in the first-JPEG benchmark: the raw grab
 * (v4l2-ctl --stream-mmap --stream-count=1), then the frame saved as Benchmarks/one_jpeg.h saves
 * it for the host's baseline (planar 4:2:2, libturbojpeg at quality 90, a temporary name renamed
 * into place). No catalog, no hash, no thumbnail, no EXIF, no checks a user would need. Linked
 * to libturbojpeg as camroll is to its JPEG library (dynamically), so that both pay for loading
 * one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../Benchmarks/one_jpeg.h"

#define BUFFERS 2

static int xioctl(int fd, unsigned long request, void *argument) {
    int result;
    do result = ioctl(fd, request, argument);
    while (result < 0 && errno == EINTR);
    return result;
}

static int fail(const char *what) {
    fprintf(stderr, "grab-jpeg: %s: %s\n", what, strerror(errno));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: grab-jpeg DEVICE WIDTH HEIGHT OUTPUT.jpg\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail(argv[1]);
    struct v4l2_format format = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    format.fmt.pix.width = (unsigned)atoi(argv[2]);
    format.fmt.pix.height = (unsigned)atoi(argv[3]);
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    format.fmt.pix.field = V4L2_FIELD_ANY;
    if (xioctl(fd, VIDIOC_S_FMT, &format) < 0) return fail("VIDIOC_S_FMT");
    if (format.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV) {
        fprintf(stderr, "grab-jpeg: the camera gives no YUYV\n");
        return 1;
    }
    int width = (int)format.fmt.pix.width, height = (int)format.fmt.pix.height;
    int pitch = (int)format.fmt.pix.bytesperline;

    struct v4l2_requestbuffers request = {.count = BUFFERS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
    if (xioctl(fd, VIDIOC_REQBUFS, &request) < 0 || request.count < 1) return fail("VIDIOC_REQBUFS");
    void *mapped[BUFFERS] = {0};
    for (unsigned i = 0; i < request.count && i < BUFFERS; i++) {
        struct v4l2_buffer buffer = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
        if (xioctl(fd, VIDIOC_QUERYBUF, &buffer) < 0) return fail("VIDIOC_QUERYBUF");
        mapped[i] = mmap(NULL, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, buffer.m.offset);
        if (mapped[i] == MAP_FAILED) return fail("mmap");
        if (xioctl(fd, VIDIOC_QBUF, &buffer) < 0) return fail("VIDIOC_QBUF");
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(fd, VIDIOC_STREAMON, &type) < 0) return fail("VIDIOC_STREAMON");
    struct pollfd ready = {.fd = fd, .events = POLLIN};
    if (poll(&ready, 1, 5000) != 1) return fail("poll");
    struct v4l2_buffer frame = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
    if (xioctl(fd, VIDIOC_DQBUF, &frame) < 0) return fail("VIDIOC_DQBUF");
    int status = save_one_jpeg(mapped[frame.index], (size_t)pitch, width, height, argv[4]);
    xioctl(fd, VIDIOC_STREAMOFF, &type);
    return status;
}
