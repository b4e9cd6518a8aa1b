/*
 * grab-jpeg DEVICE WIDTH HEIGHT OUTPUT.jpg [CATALOG]: the least a program can do for one JPEG
 * from a V4L2 camera, as the floor under `camroll snap --skip 0` in the first-JPEG benchmark: the
 * raw grab (v4l2-ctl --stream-mmap --stream-count=1), then the frame saved as
 * Benchmarks/one_jpeg.h saves it for the host's baseline (planar 4:2:2, libturbojpeg at quality
 * 90, a temporary name renamed into place). No hash, no thumbnail, no EXIF, no checks a user
 * would need. Linked to libturbojpeg as camroll is to its JPEG library (dynamically), so that
 * both pay for loading one.
 *
 * With CATALOG (a catalog camroll made), the photo is also recorded there as camroll records it,
 * in the least code that can: the catalog opened and the run's row committed (synced) on a
 * thread of its own while the frame is grabbed and encoded; then the capture's row before the
 * file takes its name, and the save's row with the run's end in one commit. The floor under a
 * tool that keeps a record of what it saved.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
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

static sqlite3 *catalog;
static sqlite3_int64 run_id;

static int sql(const char *statement) {
    if (sqlite3_exec(catalog, statement, NULL, NULL, NULL) == SQLITE_OK) return 0;
    fprintf(stderr, "grab-jpeg: %s: %s\n", statement, sqlite3_errmsg(catalog));
    return 1;
}

/* The catalog opened as camroll opens it, and the run's row committed and synced. */
static void *begin_run(void *path) {
    if (sqlite3_open_v2(path, &catalog, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK
        || sql("PRAGMA foreign_keys=ON") || sql("PRAGMA journal_mode=WAL") || sql("PRAGMA synchronous=FULL")
        || sql("BEGIN IMMEDIATE")
        || sql("INSERT INTO runs(uuid, started_at, command, device, requested_count, status, output_template, "
               "requested_frames, pid) VALUES (lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ'), "
               "'grab-jpeg', '/dev/video0', 1, 'running', 'out.jpg', 1, 1)")
        || sql("COMMIT") || sql("PRAGMA synchronous=NORMAL"))
        return "";
    run_id = sqlite3_last_insert_rowid(catalog);
    return NULL;
}

/* A statement with the run's id, the JPEG's size and the output's path bound as ?1, ?2, ?3. */
static int sql_bound(const char *statement, sqlite3_int64 size, const char *path) {
    sqlite3_stmt *prepared;
    if (sqlite3_prepare_v2(catalog, statement, -1, &prepared, NULL) != SQLITE_OK) return sql(statement);
    sqlite3_bind_int64(prepared, 1, run_id);
    sqlite3_bind_int64(prepared, 2, size);
    sqlite3_bind_text(prepared, 3, path, -1, SQLITE_STATIC);
    int status = sqlite3_step(prepared);
    sqlite3_finalize(prepared);
    if (status == SQLITE_DONE) return 0;
    fprintf(stderr, "grab-jpeg: %s: %s\n", statement, sqlite3_errmsg(catalog));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: grab-jpeg DEVICE WIDTH HEIGHT OUTPUT.jpg [CATALOG]\n");
        return 2;
    }
    pthread_t opening;
    if (argc == 6 && pthread_create(&opening, NULL, begin_run, argv[5]) != 0) return fail("pthread_create");
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
    if (argc == 5) {
        int status = save_one_jpeg(mapped[frame.index], (size_t)pitch, width, height, argv[4]);
        xioctl(fd, VIDIOC_STREAMOFF, &type);
        return status;
    }
    unsigned char *jpeg;
    unsigned long size;
    if (encode_one_jpeg(mapped[frame.index], (size_t)pitch, width, height, &jpeg, &size)) return 1;
    xioctl(fd, VIDIOC_STREAMOFF, &type);
    void *failed;
    if (pthread_join(opening, &failed) != 0 || failed) return 1;
    char capture[512];
    snprintf(capture, sizeof capture,
             "INSERT INTO captures(run_id, uuid, captured_at, frame_sequence, pixel_format, width, height, jpeg_quality, "
             "jpeg_bytes, xxh128) VALUES (?1, lower(hex(randomblob(16))), strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'), %u, "
             "'YUYV', %d, %d, 90, ?2, '0')", frame.sequence, width, height);
    if (sql_bound(capture, (sqlite3_int64)size, argv[4])
        || write_renamed(jpeg, size, argv[4]) || sql("BEGIN IMMEDIATE")
        || sql_bound("INSERT INTO saves(capture_id, seq, path, bytes, xxh128, saved_at, duration_us, synced, status) "
                     "VALUES ((SELECT max(id) FROM captures WHERE run_id = ?1), 1, ?3, ?2, '0', "
                     "strftime('%Y-%m-%dT%H:%M:%fZ'), 0, 0, 'saved')", (sqlite3_int64)size, argv[4])
        || sql_bound("UPDATE runs SET status = 'completed', finished_at = strftime('%Y-%m-%dT%H:%M:%fZ') "
                     "WHERE id = ?1 AND ?2 >= 0 AND ?3 IS NOT NULL", (sqlite3_int64)size, argv[4])
        || sql("COMMIT"))
        return 1;
    return 0;
}
