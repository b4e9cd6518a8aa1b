/*
 * snap_one OUTPUT.jpg [WIDTH HEIGHT]: the least a program can do for one photo of a YUYV camera
 * frame, as the baseline for `camroll snap -n 1`: make a frame of colour bars in YUYV (as the
 * test pattern does), split it into planar 4:2:2 with the limited-to-full range stretch, encode
 * it with libturbojpeg at quality 90, write it to a temporary name and rename it into place.
 * No catalog, no hash, no thumbnail, no EXIF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <turbojpeg.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: snap_one OUTPUT.jpg [WIDTH HEIGHT]\n");
        return 2;
    }
    int width = argc > 3 ? atoi(argv[2]) : 1920, height = argc > 3 ? atoi(argv[3]) : 1080;
    static const unsigned char bars[8][3] = {  /* 75% bars, limited-range Y Cb Cr */
        {180, 128, 128}, {162, 44, 142}, {131, 156, 44}, {112, 72, 58},
        {84, 184, 198}, {65, 100, 212}, {35, 212, 114}, {16, 128, 128}};
    unsigned char *yuyv = malloc((size_t)width * height * 2);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x += 2) {
            const unsigned char *bar = bars[x * 8 / width];
            unsigned char *p = yuyv + ((size_t)y * width + x) * 2;
            p[0] = bar[0], p[1] = bar[1], p[2] = bar[0], p[3] = bar[2];
        }
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
            const unsigned char *p = yuyv + ((size_t)y * width + 2 * x) * 2;
            planes[0][(size_t)y * width + 2 * x] = luma[p[0]];
            planes[1][(size_t)y * half + x] = chroma[p[1]];
            planes[0][(size_t)y * width + 2 * x + 1] = luma[p[2]];
            planes[2][(size_t)y * half + x] = chroma[p[3]];
        }
    tjhandle handle = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    int strides[3] = {width, half, half};
    if (tjCompressFromYUVPlanes(handle, (const unsigned char **)planes, width, strides, height, TJSAMP_422, &jpeg, &size, 90, 0) != 0) {
        fprintf(stderr, "snap_one: %s\n", tjGetErrorStr2(handle));
        return 1;
    }
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", argv[1]);
    FILE *file = fopen(temporary, "wb");
    if (!file || fwrite(jpeg, 1, size, file) != size || fclose(file) != 0 || rename(temporary, argv[1]) != 0) {
        perror("snap_one");
        return 1;
    }
    return 0;
}
