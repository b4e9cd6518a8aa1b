#ifndef CAMROLL_CV4L2_H
#define CAMROLL_CV4L2_H
/*
 * Swift cannot call variadic C functions (v4l2_open, v4l2_ioctl) and does not import
 * function-like macros (VIDIOC_*, v4l2_fourcc). Everything camroll needs from them is
 * re-exported here as functions and constants with the cv4l2_ prefix.
 *
 * libv4l2 and libv4lconvert are loaded the first time a device is handed to libv4l2
 * (cv4l2_fd_open: a camera whose formats camroll does not read itself), not at every start
 * (library_loader.h). Until then the calls below go to the kernel itself, as libv4l2's own do
 * for a descriptor it was not given.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>

/* The kernel's ioctl, without libv4l2: to ask whether a node is V4L2 at all before wrapping it
   (libv4l2 prints its own complaints for nodes that are not). */
static inline int cv4l2_raw_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
/* Hands `fd` to libv4l2 (loading it first; its own log lines silenced: camroll reports errors
   itself). -1 where it cannot be loaded or refuses the device; why, in `why`. */
int cv4l2_fd_open(int fd, char *why, size_t why_size);
int cv4l2_close(int fd);
int cv4l2_ioctl(int fd, unsigned long request, void *arg);
void *cv4l2_mmap(size_t length, int fd, int64_t offset);
int cv4l2_munmap(void *start, size_t length);
/* The file libv4l2 is loaded from (loading it), or NULL: `camroll --version`. */
const char *cv4l2_library_file(void);

/* libv4lconvert: a frame of a format camroll does not read into planar YUV 4:2:0. 1 with the
   converter in `converter`; -1 where the library cannot be loaded, 0 where it cannot be set up
   for the device, with why in `why`. */
int cv4l2_converter_create(int fd, void **converter, char *why, size_t why_size);
void cv4l2_converter_destroy(void *converter);
/* The bytes written to `out`, or -1 (cv4l2_converter_error says why). */
int cv4l2_convert(void *converter, struct v4l2_format *source, struct v4l2_format *destination,
                  const unsigned char *in, int in_size, unsigned char *out, int out_size);
const char *cv4l2_converter_error(void *converter);

/* ioctl request numbers */
static const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CV4L2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CV4L2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long CV4L2_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long CV4L2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CV4L2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CV4L2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long CV4L2_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long CV4L2_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;

/* pixel formats camroll names on the command line */
static const uint32_t CV4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t CV4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t CV4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t CV4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
static const uint32_t CV4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;

/* capabilities, buffer types and flags */
static const uint32_t CV4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
static const uint32_t CV4L2_CAP_VIDEO_CAPTURE_MPLANE = V4L2_CAP_VIDEO_CAPTURE_MPLANE;
static const uint32_t CV4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
static const uint32_t CV4L2_CAP_META_CAPTURE = V4L2_CAP_META_CAPTURE;
static const uint32_t CV4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
static const uint32_t CV4L2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
static const uint32_t CV4L2_MEMORY_MMAP = V4L2_MEMORY_MMAP;
static const uint32_t CV4L2_BUF_FLAG_ERROR = V4L2_BUF_FLAG_ERROR;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MASK = V4L2_BUF_FLAG_TIMESTAMP_MASK;
static const uint32_t CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
static const uint32_t CV4L2_FIELD_ANY = V4L2_FIELD_ANY;
static const uint32_t CV4L2_FMT_FLAG_COMPRESSED = V4L2_FMT_FLAG_COMPRESSED;
static const uint32_t CV4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
static const uint32_t CV4L2_FRMSIZE_TYPE_DISCRETE = V4L2_FRMSIZE_TYPE_DISCRETE;
static const uint32_t CV4L2_FRMIVAL_TYPE_DISCRETE = V4L2_FRMIVAL_TYPE_DISCRETE;
static const uint32_t CV4L2_CAP_TIMEPERFRAME = V4L2_CAP_TIMEPERFRAME;
static const uint32_t CV4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const uint32_t CV4L2_CTRL_FLAG_NEXT_COMPOUND = V4L2_CTRL_FLAG_NEXT_COMPOUND;
static const uint32_t CV4L2_CTRL_FLAG_DISABLED = V4L2_CTRL_FLAG_DISABLED;
static const uint32_t CV4L2_CTRL_FLAG_READ_ONLY = V4L2_CTRL_FLAG_READ_ONLY;
static const uint32_t CV4L2_CTRL_FLAG_WRITE_ONLY = V4L2_CTRL_FLAG_WRITE_ONLY;
static const uint32_t CV4L2_CTRL_FLAG_INACTIVE = V4L2_CTRL_FLAG_INACTIVE;
#endif
