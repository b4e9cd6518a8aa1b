/*
 * snap_one OUTPUT.jpg [WIDTH HEIGHT]: the least a program can do for one photo of a YUYV camera
 * frame, as the baseline for `camroll snap -n 1`: make a frame of colour bars in YUYV (as the
 * test pattern does), then save it as one_jpeg.h does.
 */
#include "one_jpeg.h"

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
    return save_one_jpeg(yuyv, (size_t)width * 2, width, height, argv[1]);
}
