/*
 * The least work a program can do to save one photo of a YUYV frame, shared by the baselines
 * camroll is measured against (Benchmarks/snap_one.c on the host, Tests/vm/grab_jpeg.c in the
 * VM): the frame split into planar 4:2:2 with the limited-to-full range stretch, encoded with
 * libturbojpeg at quality 90, written under a temporary name and renamed into place. No
 * catalog, no hash, no thumbnail, no EXIF. Returns 0, or 1 with the reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <turbojpeg.h>

/* The frame encoded: *jpeg (libturbojpeg's buffer) and *size. */
static int encode_one_jpeg(const unsigned char *yuyv, size_t pitch, int width, int height, unsigned char **jpeg,
                           unsigned long *size) {
    unsigned char luma[256], chroma[256];
    for (int v = 0; v < 256; v++) {
        int l = (v - 16) * 255 / 219, c = 128 + (v - 128) * 255 / 224;
        luma[v] = l < 0 ? 0 : l > 255 ? 255 : l;
        chroma[v] = c < 0 ? 0 : c > 255 ? 255 : c;
    }
    int half = width / 2;
    unsigned char *planes[3] = {malloc((size_t)width * height), malloc((size_t)half * height), malloc((size_t)half * height)};
    for (int y = 0; y < height; y++)
        for (int x = 0; x < half; x++) {
            const unsigned char *p = yuyv + (size_t)y * pitch + 4 * (size_t)x;
            planes[0][(size_t)y * width + 2 * x] = luma[p[0]];
            planes[1][(size_t)y * half + x] = chroma[p[1]];
            planes[0][(size_t)y * width + 2 * x + 1] = luma[p[2]];
            planes[2][(size_t)y * half + x] = chroma[p[3]];
        }
    tjhandle handle = tjInitCompress();
    *jpeg = NULL;
    *size = 0;
    int strides[3] = {width, half, half};
    if (tjCompressFromYUVPlanes(handle, (const unsigned char **)planes, width, strides, height, TJSAMP_422, jpeg, size, 90, 0) != 0) {
        fprintf(stderr, "%s\n", tjGetErrorStr2(handle));
        return 1;
    }
    return 0;
}

/* The JPEG written under a temporary name and renamed into place. */
static int write_renamed(const unsigned char *jpeg, unsigned long size, const char *path) {
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *file = fopen(temporary, "wb");
    if (!file || fwrite(jpeg, 1, size, file) != size || fclose(file) != 0 || rename(temporary, path) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static int save_one_jpeg(const unsigned char *yuyv, size_t pitch, int width, int height, const char *path) {
    unsigned char *jpeg;
    unsigned long size;
    return encode_one_jpeg(yuyv, pitch, width, height, &jpeg, &size) || write_renamed(jpeg, size, path);
}
