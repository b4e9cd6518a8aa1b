/* See include/cpixels.h: a YUYV frame, or a planar 4:2:0 or 4:4:4 one, to a JPEG through
 * libjpeg's raw-data interface, one strip of rows at a time. */
#include "cpixels.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

struct cpixels_jpeg_encoder {
    struct jpeg_compress_struct jpeg;
    struct jpeg_error_mgr errors;
    struct jpeg_destination_mgr destination;
    jmp_buf failed;
    char message[JMSG_LENGTH_MAX];
};

/* libjpeg's default error_exit ends the process: here a failure returns to the encode call. */
static void fail(j_common_ptr jpeg) {
    cpixels_jpeg_encoder *encoder = (cpixels_jpeg_encoder *)jpeg;
    (*jpeg->err->format_message)(jpeg, encoder->message);
    longjmp(encoder->failed, 1);
}

/* Warnings (a compressor has hardly any) are not printed on stderr, which is the user's. */
static void keep_quiet(j_common_ptr jpeg) { (void)jpeg; }

/* The destination is one buffer of the worst case's size, as turbojpeg sizes it (tjBufSize):
 * running out of it is a failure (libjpeg reports a suspension it cannot make), never a
 * reallocation. */
static void no_op(j_compress_ptr jpeg) { (void)jpeg; }
static boolean buffer_full(j_compress_ptr jpeg) { (void)jpeg; return FALSE; }

cpixels_jpeg_encoder *cpixels_jpeg_encoder_create(void) {
    cpixels_jpeg_encoder *encoder = calloc(1, sizeof *encoder);
    if (!encoder) return NULL;
    encoder->jpeg.err = jpeg_std_error(&encoder->errors);
    encoder->errors.error_exit = fail;
    encoder->errors.output_message = keep_quiet;
    if (setjmp(encoder->failed)) {
        free(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->jpeg);
    encoder->destination.init_destination = no_op;
    encoder->destination.empty_output_buffer = buffer_full;
    encoder->destination.term_destination = no_op;
    encoder->jpeg.dest = &encoder->destination;
    return encoder;
}

void cpixels_jpeg_encoder_destroy(cpixels_jpeg_encoder *encoder) {
    if (!encoder) return;
    jpeg_destroy_compress(&encoder->jpeg);
    free(encoder);
}

const char *cpixels_jpeg_encoder_error(const cpixels_jpeg_encoder *encoder) { return encoder->message; }

/* Rows past the picture's right edge and below its bottom are filled with its last column and
 * row, as turbojpeg's tjCompressFromYUVPlanes fills them: the same JPEG, byte for byte. */
static void pad_strip(JSAMPARRAY rows, int strip_rows, int filled_rows, size_t filled_width, size_t padded_width) {
    for (int row = 0; row < filled_rows; row++) {
        for (size_t x = filled_width; x < padded_width; x++) rows[row][x] = rows[row][filled_width - 1];
    }
    for (int row = filled_rows; row < strip_rows; row++) memcpy(rows[row], rows[filled_rows - 1], padded_width);
}

/* Where a strip's rows come from: a YUYV frame, or the three planes of a 4:2:0 or 4:4:4 one. */
typedef struct {
    const uint8_t *yuyv;            /* YUYV: `stride` bytes a row */
    const uint8_t *planes[3];       /* planar: luma, Cb, Cr, `strides` bytes a row */
    size_t stride, strides[3];
    int width, height, full_range;
} source;

/* Copies `count` samples of one plane's row, expanding limited range unless full range. */
static void copy_row(const uint8_t *from, uint8_t *to, size_t count, int chroma, int full_range) {
    if (full_range) memcpy(to, from, count);
    else cpixels_expand_plane(from, to, count, chroma);
}

/* Compresses `frame` with luma sampled `h_samp` x `v_samp` times each chroma sample: 2 x 1
 * (4:2:2, from YUYV), 2 x 2 (4:2:0) or 1 x 1 (4:4:4, from planes): each strip (8 rows of each
 * component, 16 luma rows for 4:2:0) filled from the frame and padded, then handed to libjpeg. */
static int encode(cpixels_jpeg_encoder *encoder, const source *frame, int h_samp, int v_samp, int quality, uint8_t *out,
                  size_t capacity, size_t *size) {
    struct jpeg_compress_struct *jpeg = &encoder->jpeg;
    if (setjmp(encoder->failed)) {
        jpeg_abort_compress(jpeg);
        return -1;
    }
    encoder->destination.next_output_byte = out;
    encoder->destination.free_in_buffer = capacity;

    jpeg->image_width = (JDIMENSION)frame->width;
    jpeg->image_height = (JDIMENSION)frame->height;
    jpeg->input_components = 3;
    jpeg->in_color_space = JCS_YCbCr;
    jpeg_set_defaults(jpeg);
    jpeg_set_quality(jpeg, quality, TRUE);
    /* turbojpeg's choice, so that the output is what tjCompressFromYUVPlanes makes. */
    jpeg->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
    jpeg->raw_data_in = TRUE;
    jpeg->comp_info[0].h_samp_factor = h_samp;
    jpeg->comp_info[0].v_samp_factor = v_samp;
    for (int c = 1; c < 3; c++) jpeg->comp_info[c].h_samp_factor = jpeg->comp_info[c].v_samp_factor = 1;
    jpeg_start_compress(jpeg, TRUE);

    /* One strip of each component, as wide as its whole blocks, each one block of memory (the
     * YUYV split writes rows at a fixed distance). From the image's pool, which libjpeg frees
     * when the image is finished or abandoned. */
    enum { MAX_ROWS = 2 * DCTSIZE };
    JSAMPROW rows[3][MAX_ROWS];
    JSAMPARRAY strip[3] = {rows[0], rows[1], rows[2]};
    size_t padded[3];
    int strip_rows[3];
    for (int c = 0; c < 3; c++) {
        padded[c] = (size_t)jpeg->comp_info[c].width_in_blocks * DCTSIZE;
        strip_rows[c] = jpeg->comp_info[c].v_samp_factor * DCTSIZE;
        JSAMPLE *plane = (*jpeg->mem->alloc_large)((j_common_ptr)jpeg, JPOOL_IMAGE, padded[c] * (size_t)strip_rows[c]);
        for (int row = 0; row < strip_rows[c]; row++) rows[c][row] = plane + (size_t)row * padded[c];
    }
    /* The picture's sizes in each component (subsampled chroma rounded up, as libv4lconvert and
     * turbojpeg make them). */
    const size_t chroma_width = ((size_t)frame->width + (size_t)h_samp - 1) / (size_t)h_samp;
    const size_t widths[3] = {(size_t)frame->width, chroma_width, chroma_width};
    const int heights[3] = {frame->height, (frame->height + v_samp - 1) / v_samp, (frame->height + v_samp - 1) / v_samp};
    for (int luma_row = 0; luma_row < frame->height; luma_row += strip_rows[0]) {
        const int strip_index = luma_row / strip_rows[0];
        int filled[3];
        for (int c = 0; c < 3; c++) {
            const int left = heights[c] - strip_index * strip_rows[c];
            filled[c] = left < strip_rows[c] ? left : strip_rows[c];
        }
        if (frame->yuyv) {
            cpixels_yuyv_split(frame->yuyv + (size_t)luma_row * frame->stride, frame->stride, frame->width, filled[0],
                               rows[0][0], padded[0], rows[1][0], rows[2][0], padded[1], frame->full_range);
        } else {
            for (int c = 0; c < 3; c++) {
                const uint8_t *first = frame->planes[c] + (size_t)(strip_index * strip_rows[c]) * frame->strides[c];
                for (int row = 0; row < filled[c]; row++) {
                    copy_row(first + (size_t)row * frame->strides[c], rows[c][row], widths[c], c > 0, frame->full_range);
                }
            }
        }
        for (int c = 0; c < 3; c++) pad_strip(strip[c], strip_rows[c], filled[c], widths[c], padded[c]);
        jpeg_write_raw_data(jpeg, strip, (JDIMENSION)strip_rows[0]);
    }
    jpeg_finish_compress(jpeg);
    *size = capacity - encoder->destination.free_in_buffer;
    return 0;
}

int cpixels_jpeg_encode_yuyv(cpixels_jpeg_encoder *encoder, const uint8_t *yuyv, size_t stride, int width, int height,
                             int full_range, int quality, uint8_t *out, size_t capacity, size_t *size) {
    encoder->message[0] = 0;
    if (width <= 0 || height <= 0 || width % 2 != 0) {
        snprintf(encoder->message, sizeof encoder->message, "cannot encode %dx%d YUYV", width, height);
        return -1;
    }
    const source frame = {.yuyv = yuyv, .stride = stride, .width = width, .height = height, .full_range = full_range};
    return encode(encoder, &frame, 2, 1, quality, out, capacity, size);
}

/* A planar frame, its three planes one after another (chroma planes of width / h_samp x
 * height / v_samp, rounded up), encoded as `name` says it is. */
static int encode_planes(cpixels_jpeg_encoder *encoder, const uint8_t *planes, int width, int height, int h_samp,
                         int v_samp, const char *name, int full_range, int quality, uint8_t *out, size_t capacity,
                         size_t *size) {
    encoder->message[0] = 0;
    if (width <= 0 || height <= 0) {
        snprintf(encoder->message, sizeof encoder->message, "cannot encode %dx%d %s", width, height, name);
        return -1;
    }
    const size_t chroma_width = ((size_t)width + (size_t)h_samp - 1) / (size_t)h_samp;
    const size_t chroma_height = ((size_t)height + (size_t)v_samp - 1) / (size_t)v_samp;
    const size_t luma_size = (size_t)width * (size_t)height;
    const source frame = {
        .planes = {planes, planes + luma_size, planes + luma_size + chroma_width * chroma_height},
        .strides = {(size_t)width, chroma_width, chroma_width},
        .width = width, .height = height, .full_range = full_range};
    return encode(encoder, &frame, h_samp, v_samp, quality, out, capacity, size);
}

int cpixels_jpeg_encode_i420(cpixels_jpeg_encoder *encoder, const uint8_t *planes, int width, int height,
                             int full_range, int quality, uint8_t *out, size_t capacity, size_t *size) {
    return encode_planes(encoder, planes, width, height, 2, 2, "YUV 4:2:0", full_range, quality, out, capacity, size);
}

int cpixels_jpeg_encode_yuv444(cpixels_jpeg_encoder *encoder, const uint8_t *planes, int width, int height,
                               int full_range, int quality, uint8_t *out, size_t capacity, size_t *size) {
    return encode_planes(encoder, planes, width, height, 1, 1, "YUV 4:4:4", full_range, quality, out, capacity, size);
}
