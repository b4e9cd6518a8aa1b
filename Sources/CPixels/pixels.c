/* See include/cpixels.h. */
#include "cpixels.h"

#include <stdlib.h>
#include <string.h>

/* Limited to full range in 16.16 fixed point: luma round((v - 16) * 255 / 219), chroma
 * round(128 + (v - 128) * 255 / 224), clamped to 0–255 — the same values, for all 256 inputs,
 * as computing them in floating point and rounding half away from zero (a test checks it). */
static inline uint8_t clamp_byte(int value) { return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value); }
static inline uint8_t luma_full(int v) { return clamp_byte(((v - 16) * 76310 + 32768) >> 16); }
static inline uint8_t chroma_full(int v) { return clamp_byte(((v - 16) * 74606 + 65536) >> 16); }

/* Compiled twice, for AVX2 and for the x86-64 baseline, the one to run chosen when the library
 * loads (an ifunc): AVX2 takes twice the samples an instruction. Not under ThreadSanitizer,
 * whose instrumented ifunc resolver runs before its runtime is set up and crashes the process
 * at load. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CPIXELS_WITHOUT_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__clang__) && !defined(CPIXELS_WITHOUT_CLONES)
#define CPIXELS_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CPIXELS_VECTOR_CLONES
#endif

int cpixels_can_allocate(size_t bytes) {
    void *block = malloc(bytes);
    if (!block) return 0;
    /* The block "used", so that the optimizer keeps the malloc: a malloc whose block is only freed
     * may be dropped, and the probe then always succeeds. */
    __asm__ volatile("" : : "r"(block) : "memory");
    free(block);
    return 1;
}

uint8_t cpixels_expand_luma(uint8_t value) { return luma_full(value); }
uint8_t cpixels_expand_chroma(uint8_t value) { return chroma_full(value); }

typedef uint8_t u8x8 __attribute__((vector_size(8)));
typedef uint8_t u8x16 __attribute__((vector_size(16)));
typedef uint16_t u16x16 __attribute__((vector_size(32)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));

/* luma_full or chroma_full of 16 samples at once in 16-bit lanes, each sample the high byte of
 * its lane: scaled = (v * 256 * factor) >> 16 (one multiply-high instruction), minus `offset`
 * with a floor at 0, shifted right by 7, capped at 255. For every input these constants give
 * luma_full's and chroma_full's very values (found by trying them all; a test compares the
 * two for all 256). A macro, not a function: a 32-byte vector argument is not allowed in the
 * baseline clone. */
enum { LUMA_FACTOR = 38154, LUMA_OFFSET = 2320, CHROMA_FACTOR = 37302, CHROMA_OFFSET = 2203 };
#define EXPAND_HIGH_BYTES(result, high, factor, offset) do { \
        u16x16 scaled_ = __builtin_convertvector((__builtin_convertvector((high), u32x16) * (factor)) >> 16, u16x16); \
        u16x16 value_ = ((scaled_ - (offset)) & (u16x16)(scaled_ > (offset))) >> 7; \
        u16x16 over_ = (u16x16)(value_ > 255); \
        (result) = __builtin_convertvector((value_ & ~over_) | (255 & over_), u8x16); \
    } while (0)

/* Row by row. As it is, a loop for each plane, simple enough for the compiler's vectorizer
 * (interleaved loads: a stride of 2 for luma, 4 for each chroma). Expanded, 16 pixels at a time
 * as 16 lanes of Y|Cb and Y|Cr: shifted left by 8 they are the lumas, masked the chromas, each
 * in its lane's high byte as EXPAND_HIGH_BYTES takes it; the chromas then go to their planes
 * by a shuffle. A 1920x1080 frame: 0.43 ms with AVX2, against 0.57 for the compiler's own
 * vectorization of the per-sample expansions (32-bit lanes) and ~4 ms for lookup tables. */
CPIXELS_VECTOR_CLONES
void cpixels_yuyv_split(const uint8_t *yuyv, size_t stride, int width, int height, uint8_t *restrict luma,
                        size_t luma_stride, uint8_t *restrict cb, uint8_t *restrict cr, size_t chroma_stride,
                        int full_range) {
    const int pairs = width / 2;
    for (int y = 0; y < height; y++) {
        const uint8_t *restrict row = yuyv + (size_t)y * stride;
        uint8_t *restrict luma_row = luma + (size_t)y * luma_stride;
        uint8_t *restrict cb_row = cb + (size_t)y * chroma_stride;
        uint8_t *restrict cr_row = cr + (size_t)y * chroma_stride;
        if (full_range) {
            for (int x = 0; x < 2 * pairs; x++) luma_row[x] = row[2 * x];
            for (int p = 0; p < pairs; p++) cb_row[p] = row[4 * p + 1];
            for (int p = 0; p < pairs; p++) cr_row[p] = row[4 * p + 3];
            continue;
        }
        int p = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        for (; p + 8 <= pairs; p += 8) {
            u16x16 lanes;  /* Y in each lane's low byte, Cb or Cr in its high byte */
            memcpy(&lanes, row + 4 * p, sizeof lanes);
            u8x16 lumas, chromas;
            EXPAND_HIGH_BYTES(lumas, lanes << 8, LUMA_FACTOR, LUMA_OFFSET);
            EXPAND_HIGH_BYTES(chromas, lanes & 0xff00, CHROMA_FACTOR, CHROMA_OFFSET);
            u8x8 blues = __builtin_shufflevector(chromas, chromas, 0, 2, 4, 6, 8, 10, 12, 14);
            u8x8 reds = __builtin_shufflevector(chromas, chromas, 1, 3, 5, 7, 9, 11, 13, 15);
            memcpy(luma_row + 2 * p, &lumas, sizeof lumas);
            memcpy(cb_row + p, &blues, sizeof blues);
            memcpy(cr_row + p, &reds, sizeof reds);
        }
#endif
        for (; p < pairs; p++) {
            luma_row[2 * p] = luma_full(row[4 * p]);
            luma_row[2 * p + 1] = luma_full(row[4 * p + 2]);
            cb_row[p] = chroma_full(row[4 * p + 1]);
            cr_row[p] = chroma_full(row[4 * p + 3]);
        }
    }
}

CPIXELS_VECTOR_CLONES
void cpixels_expand_plane(const uint8_t *restrict from, uint8_t *restrict to, size_t count, int chroma) {
    const uint16_t factor = chroma ? CHROMA_FACTOR : LUMA_FACTOR, offset = chroma ? CHROMA_OFFSET : LUMA_OFFSET;
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        u8x16 samples, expanded;
        memcpy(&samples, from + i, sizeof samples);
        EXPAND_HIGH_BYTES(expanded, __builtin_convertvector(samples, u16x16) << 8, factor, offset);
        memcpy(to + i, &expanded, sizeof expanded);
    }
    for (; i < count; i++) to[i] = chroma ? chroma_full(from[i]) : luma_full(from[i]);
}

/* floor(sum / count) for a block of `count` samples (sum at most 255 * count) as a multiply and a
 * shift: with reciprocal = floor(2^40 / count) + 1 the quotient is exact wherever 255 * count^2 <
 * 2^40, so for blocks of up to 65536 samples (a thumbnail of a 36-megapixel picture has 1500);
 * bigger blocks are divided. A division is one instruction natively but a call under qemu's
 * TCG; a 640x480 frame's thumbnail made 115 200 of them when each block's mean and bounds were
 * divided out. */
typedef struct { uint64_t count, reciprocal; } block_divisor;
enum { EXACT_RECIPROCAL_COUNT = 65536 };
static inline block_divisor block_divisor_for(uint64_t count) {
    block_divisor d = { count, count <= EXACT_RECIPROCAL_COUNT ? ((uint64_t)1 << 40) / count + 1 : 0 };
    return d;
}
static inline uint8_t block_mean(uint64_t sum, block_divisor d) {
    return (uint8_t)(d.reciprocal ? (sum * d.reciprocal) >> 40 : sum / d.count);
}

/* Block `index` of `count` along a side of `size` pixels: [start, end), at least one pixel (where
 * the output is larger than the picture). Rows and columns alike. */
static inline void block_span(int index, int size, int count, int *start, int *end) {
    *start = (int)((int64_t)index * size / count);
    *end = (int)((int64_t)(index + 1) * size / count);
    if (*end <= *start) *end = *start + 1;
}

/* One row of blocks: each block's columns of `sums` (its rows' sums, `channels` interleaved
 * samples a pixel) summed and divided. Inlined into a copy for each constant `channels`. */
static inline __attribute__((always_inline)) void average_columns(
    const uint32_t *sums, const int *first_column, const int *end_column, int to_width, int rows, int channels,
    uint8_t *out) {
    block_divisor divisor = block_divisor_for(1);
    for (int x = 0; x < to_width; x++) {
        const uint64_t count = (uint64_t)rows * (uint64_t)(end_column[x] - first_column[x]);
        if (count != divisor.count) divisor = block_divisor_for(count);
        if (divisor.reciprocal && channels <= 4) {
            /* A block of at most 65536 samples sums to under 2^32: the pixel's channels side by
             * side, added a column at a time. */
            uint32_t block[4] = { 0, 0, 0, 0 };
            for (int sx = first_column[x]; sx < end_column[x]; sx++)
                for (int c = 0; c < channels; c++) block[c] += sums[(size_t)sx * channels + c];
            for (int c = 0; c < channels; c++) *out++ = block_mean(block[c], divisor);
            continue;
        }
        for (int c = 0; c < channels; c++) {
            uint64_t sum = 0;
            for (int sx = first_column[x]; sx < end_column[x]; sx++) sum += sums[(size_t)sx * channels + c];
            *out++ = block_mean(sum, divisor);
        }
    }
}

/* Row by row of the output: the block's source rows summed sample by sample into `sums` (a loop
 * the compiler vectorizes; in 16-bit lanes, twice as many an instruction, where a block is at
 * most 257 rows tall and so sums at most 65535), then each block's columns, whose bounds are
 * worked out once for all rows, divided by block_mean. A 640x480 YUYV frame to a 160x120
 * thumbnail (as pairs, 4 samples a pixel): 1.4 million instructions, 0.09 ms; 4.9 million and
 * 0.32 ms when the columns' bounds and the means were divided out for every sample. */
CPIXELS_VECTOR_CLONES
int cpixels_box_average(const uint8_t *from, size_t stride, int width, int height, int channels, uint8_t *to,
                        int to_width, int to_height) {
    const size_t row_samples = (size_t)width * channels;
    uint32_t *sums = malloc(row_samples * sizeof *sums);
    uint16_t *narrow_sums = malloc(row_samples * sizeof *narrow_sums);
    /* Block x covers columns [first_column[x], end_column[x]) (block_span), worked out once. */
    int *first_column = malloc((size_t)to_width * sizeof *first_column);
    int *end_column = malloc((size_t)to_width * sizeof *end_column);
    if (!sums || !narrow_sums || !first_column || !end_column) {
        free(sums);
        free(narrow_sums);
        free(first_column);
        free(end_column);
        return -1;
    }
    for (int x = 0; x < to_width; x++) block_span(x, width, to_width, &first_column[x], &end_column[x]);
    for (int y = 0; y < to_height; y++) {
        int y0, y1;
        block_span(y, height, to_height, &y0, &y1);
        if (y1 - y0 <= 257) {
            memset(narrow_sums, 0, row_samples * sizeof *narrow_sums);
            for (int sy = y0; sy < y1; sy++) {
                const uint8_t *restrict row = from + (size_t)sy * stride;
                for (size_t i = 0; i < row_samples; i++) narrow_sums[i] += row[i];
            }
            for (size_t i = 0; i < row_samples; i++) sums[i] = narrow_sums[i];
        } else {
            memset(sums, 0, row_samples * sizeof *sums);
            for (int sy = y0; sy < y1; sy++) {
                const uint8_t *restrict row = from + (size_t)sy * stride;
                for (size_t i = 0; i < row_samples; i++) sums[i] += row[i];
            }
        }
        uint8_t *out = to + (size_t)y * to_width * channels;
        switch (channels) {  /* each a loop of its own, its channels a constant */
        case 1: average_columns(sums, first_column, end_column, to_width, y1 - y0, 1, out); break;
        case 2: average_columns(sums, first_column, end_column, to_width, y1 - y0, 2, out); break;
        case 3: average_columns(sums, first_column, end_column, to_width, y1 - y0, 3, out); break;
        case 4: average_columns(sums, first_column, end_column, to_width, y1 - y0, 4, out); break;
        default: average_columns(sums, first_column, end_column, to_width, y1 - y0, channels, out); break;
        }
    }
    free(sums);
    free(narrow_sums);
    free(first_column);
    free(end_column);
    return 0;
}
