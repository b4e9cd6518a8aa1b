#ifndef CAMROLL_CPIXELS_H
#define CAMROLL_CPIXELS_H
/*
 * The per-pixel loops of camroll's JPEG path, in C so that the compiler vectorizes them: a
 * YUYV frame split into the planes turbojpeg compresses, with the limited-range expansion
 * (luma 16–235, chroma 16–240, to JPEG's 0–255) on the way; planes averaged down for a
 * thumbnail.
 */
#include <stddef.h>
#include <stdint.h>

/* Splits `height` rows of `width` YUYV pixels (`stride` bytes a row; `width` even) into a luma
 * plane of width x height and two chroma planes of width/2 x height, expanding limited range
 * to full unless `full_range`. */
void cpixels_yuyv_to_planes(const uint8_t *yuyv, size_t stride, int width, int height, uint8_t *luma,
                            uint8_t *cb, uint8_t *cr, int full_range);

/* Copies `count` samples of a plane, expanding limited range to full (`chroma`: 16–240 around
 * 128; else luma, 16–235). */
void cpixels_expand_plane(const uint8_t *from, uint8_t *to, size_t count, int chroma);

/* A picture of width x height pixels of `channels` interleaved samples (`stride` bytes a row)
 * reduced to to_width x to_height (not larger), rows packed: each pixel's samples the means of
 * the block of pixels it covers; the blocks tile the picture, so every pixel counts once. 0, or
 * -1 when out of memory. */
int cpixels_box_average(const uint8_t *from, size_t stride, int width, int height, int channels, uint8_t *to,
                        int to_width, int to_height);

/* What the expansions give for one sample (for the tests). */
uint8_t cpixels_expand_luma(uint8_t value);
uint8_t cpixels_expand_chroma(uint8_t value);

#endif
