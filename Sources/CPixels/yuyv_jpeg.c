/* See include/cpixels.h: a YUYV frame to a 4:2:2 JPEG through libjpeg's raw-data interface, one
 * strip of 8 rows at a time. */
#include "cpixels.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

struct cpixels_yuyv_encoder {
    struct jpeg_compress_struct jpeg;
    struct jpeg_error_mgr errors;
    struct jpeg_destination_mgr destination;
    jmp_buf failed;
    char message[JMSG_LENGTH_MAX];
};

/* libjpeg's default error_exit ends the process: here a failure returns to the encode call. */
static void fail(j_common_ptr jpeg) {
    cpixels_yuyv_encoder *encoder = (cpixels_yuyv_encoder *)jpeg;
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

cpixels_yuyv_encoder *cpixels_yuyv_encoder_create(void) {
    cpixels_yuyv_encoder *encoder = calloc(1, sizeof *encoder);
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

void cpixels_yuyv_encoder_destroy(cpixels_yuyv_encoder *encoder) {
    if (!encoder) return;
    jpeg_destroy_compress(&encoder->jpeg);
    free(encoder);
}

const char *cpixels_yuyv_encoder_error(const cpixels_yuyv_encoder *encoder) { return encoder->message; }

/* Rows past the picture's right edge and below its bottom are filled with its last column and
 * row, as turbojpeg's tjCompressFromYUVPlanes fills them: the same JPEG, byte for byte. */
static void pad_strip(JSAMPARRAY rows, int filled_rows, size_t filled_width, size_t padded_width) {
    for (int row = 0; row < filled_rows; row++) {
        for (size_t x = filled_width; x < padded_width; x++) rows[row][x] = rows[row][filled_width - 1];
    }
    for (int row = filled_rows; row < DCTSIZE; row++) memcpy(rows[row], rows[filled_rows - 1], padded_width);
}

int cpixels_yuyv_encode(cpixels_yuyv_encoder *encoder, const uint8_t *yuyv, size_t stride, int width, int height,
                        int full_range, int quality, uint8_t *out, size_t capacity, size_t *size) {
    struct jpeg_compress_struct *jpeg = &encoder->jpeg;
    encoder->message[0] = 0;
    if (width <= 0 || height <= 0 || width % 2 != 0) {
        snprintf(encoder->message, sizeof encoder->message, "cannot encode %dx%d YUYV", width, height);
        return -1;
    }
    if (setjmp(encoder->failed)) {
        jpeg_abort_compress(jpeg);
        return -1;
    }
    encoder->destination.next_output_byte = out;
    encoder->destination.free_in_buffer = capacity;

    jpeg->image_width = (JDIMENSION)width;
    jpeg->image_height = (JDIMENSION)height;
    jpeg->input_components = 3;
    jpeg->in_color_space = JCS_YCbCr;
    jpeg_set_defaults(jpeg);
    jpeg_set_quality(jpeg, quality, TRUE);
    /* turbojpeg's choice, so that the output is what tjCompressFromYUVPlanes makes. */
    jpeg->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
    jpeg->raw_data_in = TRUE;
    jpeg->comp_info[0].h_samp_factor = 2;
    jpeg->comp_info[0].v_samp_factor = 1;
    for (int c = 1; c < 3; c++) jpeg->comp_info[c].h_samp_factor = jpeg->comp_info[c].v_samp_factor = 1;
    jpeg_start_compress(jpeg, TRUE);

    /* One strip: 8 rows of each plane, as wide as the component's whole blocks, each plane one
     * block of memory (the split writes rows at a fixed distance). From the image's pool, which
     * libjpeg frees when the image is finished or abandoned. */
    JSAMPROW rows[3][DCTSIZE];
    JSAMPARRAY strip[3] = {rows[0], rows[1], rows[2]};
    size_t padded[3];
    for (int c = 0; c < 3; c++) {
        padded[c] = (size_t)jpeg->comp_info[c].width_in_blocks * DCTSIZE;
        JSAMPLE *plane = (*jpeg->mem->alloc_large)((j_common_ptr)jpeg, JPOOL_IMAGE, padded[c] * DCTSIZE);
        for (int row = 0; row < DCTSIZE; row++) rows[c][row] = plane + (size_t)row * padded[c];
    }
    for (int row = 0; row < height; row += DCTSIZE) {
        const int filled = height - row < DCTSIZE ? height - row : DCTSIZE;
        cpixels_yuyv_split(yuyv + (size_t)row * stride, stride, width, filled, rows[0][0], padded[0], rows[1][0],
                           rows[2][0], padded[1], full_range);
        pad_strip(strip[0], filled, (size_t)width, padded[0]);
        pad_strip(strip[1], filled, (size_t)width / 2, padded[1]);
        pad_strip(strip[2], filled, (size_t)width / 2, padded[2]);
        jpeg_write_raw_data(jpeg, strip, DCTSIZE);
    }
    jpeg_finish_compress(jpeg);
    *size = capacity - encoder->destination.free_in_buffer;
    return 0;
}
