/* See include/cpixels.h: Lanczos-3 resampling of packed RGB, in linear light. */
#include "cpixels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    LANCZOS_LOBES = 3,
    /* Entries of the linear-light → sRGB table: 2^16 steps of 1/65535 are a quarter of the
     * smallest gap between two codes' thresholds (near black, 0.00015 apart), so indexing it
     * rounds a value to the code it would get computed exactly, but for values within a step of
     * a threshold. */
    TO_SRGB_ENTRIES = 1 << 16,
};

static double lanczos3(double x) {
    x = fabs(x);
    if (x < 1e-8) return 1.0;
    if (x >= LANCZOS_LOBES) return 0.0;
    const double px = M_PI * x;
    return LANCZOS_LOBES * sin(px) * sin(px / LANCZOS_LOBES) / (px * px);
}

/* a * b, or 0 when either is not positive or the product does not fit in a size_t. */
static size_t checked_product(size_t a, size_t b) {
    if (a == 0 || b == 0) return 0;
    size_t product;
    if (__builtin_mul_overflow(a, b, &product)) return 0;
    return product;
}

/* One axis's filter: output sample i is the sum over k < taps of weight[i * taps + k] times
 * input sample first[i] + k. Taps past the picture's edge are left out and the rest normalised,
 * so the edge pixels are not darkened nor a border invented. */
typedef struct {
    int taps;
    int *first;
    float *weight;
} axis_filter;

static void axis_filter_free(axis_filter *filter) {
    free(filter->first);
    free(filter->weight);
}

/* 0, or -1 when out of memory. */
static int axis_filter_make(axis_filter *filter, int in, int out) {
    memset(filter, 0, sizeof *filter);
    /* Shrinking, the kernel is widened by the scale factor, so that it filters out what the
     * smaller picture cannot hold (a zone plate's rings above its Nyquist frequency); enlarging,
     * it interpolates at its own width. */
    const double scale = (double)in / out;
    const double stretch = scale > 1 ? scale : 1;
    const double support = LANCZOS_LOBES * stretch;
    /* Every output pixel gets the same number of taps (the loops then have a fixed length):
     * as many input pixels as the support can touch, or the whole side. */
    const double taps_wanted = ceil(2 * support) + 2;
    filter->taps = taps_wanted < in ? (int)taps_wanted : in;
    const size_t count = checked_product((size_t)out, (size_t)filter->taps);
    const size_t weight_bytes = checked_product(count, sizeof(float));
    const size_t first_bytes = checked_product((size_t)out, sizeof(int));
    if (weight_bytes == 0 || first_bytes == 0) return -1;
    filter->first = malloc(first_bytes);
    filter->weight = malloc(weight_bytes);
    if (!filter->first || !filter->weight) {
        axis_filter_free(filter);
        return -1;
    }
    for (int i = 0; i < out; i++) {
        /* The output pixel's centre, in input pixels (pixel centres at +0.5). */
        const double centre = (i + 0.5) * scale;
        /* The taps start where the support does, moved inside the picture at its edges; those
         * outside the support get the kernel's 0. */
        double start = floor(centre - support);
        if (start > in - filter->taps) start = in - filter->taps;
        if (start < 0) start = 0;
        filter->first[i] = (int)start;
        float *w = filter->weight + (size_t)i * filter->taps;
        double sum = 0;
        for (int k = 0; k < filter->taps; k++) {
            const double value = lanczos3((start + k + 0.5 - centre) / stretch);
            w[k] = (float)value;
            sum += value;
        }
        /* Normalised to sum 1: flat areas stay flat, and at an edge the taps that would fall
         * outside the picture are left out rather than an edge colour repeated into them. */
        for (int k = 0; k < filter->taps; k++) w[k] = sum != 0 ? (float)(w[k] / sum) : (float)(k == 0);
    }
    return 0;
}

static double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4); }

/* Linear light in [0, 1] to the nearest sRGB code: code c is the answer from the threshold
 * halfway between c - 1 and c (measured in sRGB, where codes are evenly spaced), so the table
 * takes 256 pow calls to fill, not one an entry. */
static void fill_to_srgb(uint8_t *table) {
    double threshold[257];
    threshold[0] = -1;
    for (int c = 1; c < 256; c++) threshold[c] = srgb_to_linear((c - 0.5) / 255.0);
    threshold[256] = 2;
    int code = 0;
    for (int i = 0; i < TO_SRGB_ENTRIES; i++) {
        const double v = (double)i / (TO_SRGB_ENTRIES - 1);
        while (v >= threshold[code + 1]) code++;
        table[i] = (uint8_t)code;
    }
}

/* Input row `y`, filtered horizontally into `out` (out_width * 3 floats): the row's samples made
 * floats first (through `to_light`: linear light, or the codes themselves), then each output
 * pixel the weighted sum of its taps. */
static void filter_row(const uint8_t *row, int width, const float *to_light, const axis_filter *filter, int out_width,
                       float *row_light, float *out) {
    for (size_t i = 0; i < (size_t)width * 3; i++) row_light[i] = to_light[row[i]];
    const int taps = filter->taps;
    for (int x = 0; x < out_width; x++) {
        const float *w = filter->weight + (size_t)x * taps;
        const float *in = row_light + (size_t)filter->first[x] * 3;
        float r = 0, g = 0, b = 0;
        for (size_t k = 0; k < (size_t)taps; k++) {
            r += w[k] * in[3 * k];
            g += w[k] * in[3 * k + 1];
            b += w[k] * in[3 * k + 2];
        }
        out[3 * (size_t)x] = r;
        out[3 * (size_t)x + 1] = g;
        out[3 * (size_t)x + 2] = b;
    }
}

int cpixels_resize_rgb(const uint8_t *from, size_t from_stride, int width, int height, uint8_t *to, size_t to_stride,
                       int to_width, int to_height, int linear_light) {
    if (!from || !to || width <= 0 || height <= 0 || to_width <= 0 || to_height <= 0) return -1;
    axis_filter columns, rows;
    if (axis_filter_make(&columns, width, to_width) != 0) return -1;
    if (axis_filter_make(&rows, height, to_height) != 0) {
        axis_filter_free(&columns);
        return -1;
    }
    /* Rows filtered horizontally are kept in a ring of as many as one output row takes: output
     * rows take input rows in order, so each is filtered once, and the picture is never held
     * whole at floating point (a 24-megapixel photo would take 288 MB so). */
    const int ring_rows = rows.taps;
    const size_t out_samples = checked_product((size_t)to_width, 3);
    const size_t ring_bytes = checked_product(checked_product(out_samples, (size_t)ring_rows), sizeof(float));
    const size_t row_bytes = checked_product(checked_product((size_t)width, 3), sizeof(float));
    const size_t sum_bytes = checked_product(out_samples, sizeof(float));
    float *ring = ring_bytes ? malloc(ring_bytes) : NULL;
    float *row_light = row_bytes ? malloc(row_bytes) : NULL;
    float *sum = sum_bytes ? malloc(sum_bytes) : NULL;
    uint8_t *to_srgb = linear_light ? malloc(TO_SRGB_ENTRIES) : NULL;
    int status = -1;
    if (!ring || !row_light || !sum || (linear_light && !to_srgb)) goto done;

    float to_light[256];
    for (int c = 0; c < 256; c++) to_light[c] = linear_light ? (float)srgb_to_linear(c / 255.0) : (float)c;
    if (linear_light) fill_to_srgb(to_srgb);

    int next_row = 0; /* the next input row to filter into the ring */
    for (int y = 0; y < to_height; y++) {
        const int first = rows.first[y];
        const float *w = rows.weight + (size_t)y * rows.taps;
        for (; next_row < first + rows.taps; next_row++) {
            filter_row(from + (size_t)next_row * from_stride, width, to_light, &columns, to_width, row_light,
                       ring + (size_t)(next_row % ring_rows) * out_samples);
        }
        memset(sum, 0, sum_bytes);
        for (int k = 0; k < rows.taps; k++) {
            const float weight = w[k];
            if (weight == 0) continue;
            const float *in = ring + (size_t)((first + k) % ring_rows) * out_samples;
            for (size_t i = 0; i < out_samples; i++) sum[i] += weight * in[i];
        }
        uint8_t *out = to + (size_t)y * to_stride;
        if (linear_light) {
            for (size_t i = 0; i < out_samples; i++) {
                /* Lanczos's negative lobes overshoot at edges: clamped to the range. */
                const float v = sum[i] <= 0 ? 0 : sum[i] >= 1 ? 1 : sum[i];
                out[i] = to_srgb[(int)(v * (TO_SRGB_ENTRIES - 1) + 0.5f)];
            }
        } else {
            for (size_t i = 0; i < out_samples; i++) {
                const float v = sum[i] + 0.5f;
                out[i] = (uint8_t)(v <= 0 ? 0 : v >= 255 ? 255 : (int)v);
            }
        }
    }
    status = 0;
done:
    free(ring);
    free(row_light);
    free(sum);
    free(to_srgb);
    axis_filter_free(&columns);
    axis_filter_free(&rows);
    return status;
}
