/* See include/cpixels.h: a YUYV frame, or a planar 4:2:0 or 4:4:4 one, to a JPEG through
 * libjpeg's raw-data interface, one strip of rows at a time; a large one in bands of rows
 * compressed side by side and joined at restart markers. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "cpixels.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

/* A picture of at least BANDING_MCU_ROWS rows of MCUs is compressed in BANDS bands (fewer when
 * it has too few rows for four, more when a band would exceed the 65535 MCUs a restart interval
 * can hold, up to MAX_BANDS). Four, whatever the machine: the JPEG's bytes depend on the picture
 * alone, and four bands share out evenly on one, two or four CPUs. */
enum { BANDS = 4, BANDING_MCU_ROWS = 32, MAX_BANDS = 16, MAX_RESTART_INTERVAL = 65535 };

struct cpixels_jpeg_encoder {
    struct jpeg_compress_struct jpeg;
    struct jpeg_error_mgr errors;
    struct jpeg_destination_mgr destination;
    jmp_buf failed;
    char message[JMSG_LENGTH_MAX];
    /* How many threads compress a banded picture's bands: 0, one for each CPU this process may
     * run on (at most one a band). */
    int threads;
    /* Band i's encoder (band 0's is this one: each band is compressed into a JPEG of its own
     * first) and the buffer that JPEG goes to; made when first needed, kept. */
    struct cpixels_jpeg_encoder *bands[MAX_BANDS];
    uint8_t *band_jpeg[MAX_BANDS];
    size_t band_capacity[MAX_BANDS];
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
    for (int band = 0; band < MAX_BANDS; band++) {
        if (band > 0) cpixels_jpeg_encoder_destroy(encoder->bands[band]);
        free(encoder->band_jpeg[band]);
    }
    jpeg_destroy_compress(&encoder->jpeg);
    free(encoder);
}

void cpixels_jpeg_encoder_set_threads(cpixels_jpeg_encoder *encoder, int threads) {
    encoder->threads = threads < 0 ? 0 : threads;
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
static int encode_whole(cpixels_jpeg_encoder *encoder, const source *frame, int h_samp, int v_samp, int quality, uint8_t *out,
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

/* How a picture is cut into bands: `count` bands of `rows` luma rows each (whole rows of MCUs;
 * the last band fewer), `restart_interval` MCUs (one band's) between restart markers; one band
 * and no restart markers for a picture too small to share out. */
typedef struct {
    int count, rows, restart_interval;
} band_layout;

static band_layout layout_of(int width, int height, int h_samp, int v_samp) {
    const long mcus_a_row = (width + 8 * h_samp - 1) / (8 * h_samp);
    const int mcu_rows = (height + 8 * v_samp - 1) / (8 * v_samp);
    const band_layout whole = {1, height, 0};
    if (mcu_rows < BANDING_MCU_ROWS || mcus_a_row > MAX_RESTART_INTERVAL) return whole;
    long each = (mcu_rows + BANDS - 1) / BANDS;
    if (each * mcus_a_row > MAX_RESTART_INTERVAL) each = MAX_RESTART_INTERVAL / mcus_a_row;
    const long count = (mcu_rows + each - 1) / each;
    if (count > MAX_BANDS) return whole;
    return (band_layout){(int)count, (int)each * 8 * v_samp, (int)(each * mcus_a_row)};
}

/* The most bytes libjpeg can write for a picture (turbojpeg's tjBufSize). */
static size_t worst_case_size(int width, int height, int h_samp, int v_samp) {
    const size_t mcu_width = 8 * (size_t)h_samp, mcu_height = 8 * (size_t)v_samp;
    const size_t padded_width = ((size_t)width + mcu_width - 1) / mcu_width * mcu_width;
    const size_t padded_height = ((size_t)height + mcu_height - 1) / mcu_height * mcu_height;
    return padded_width * padded_height * (2 + 256 / (mcu_width * mcu_height)) + 2048;
}

/* The rows `first_row` (a whole number of MCUs down) to `first_row + rows` of `frame`. */
static source band_of(const source *frame, int v_samp, int first_row, int rows) {
    source band = *frame;
    band.height = rows;
    if (frame->yuyv) {
        band.yuyv = frame->yuyv + (size_t)first_row * frame->stride;
    } else {
        for (int c = 0; c < 3; c++) {
            const size_t row = (size_t)(c == 0 ? first_row : first_row / v_samp);
            band.planes[c] = frame->planes[c] + row * frame->strides[c];
        }
    }
    return band;
}

static cpixels_jpeg_encoder *band_encoder(cpixels_jpeg_encoder *encoder, int band) {
    return band == 0 ? encoder : encoder->bands[band];
}

/* A banded picture being compressed: each thread takes the next band not yet taken. */
typedef struct {
    cpixels_jpeg_encoder *encoder;
    const source *frame;
    band_layout layout;
    int h_samp, v_samp, quality;
    atomic_int next_band;
    int status[MAX_BANDS];
    size_t size[MAX_BANDS];
} banded_picture;

static void *compress_bands(void *argument) {
    banded_picture *picture = argument;
    for (;;) {
        const int band = atomic_fetch_add_explicit(&picture->next_band, 1, memory_order_relaxed);
        if (band >= picture->layout.count) return NULL;
        const int band_rows = picture->layout.rows, first_row = band * band_rows;
        const int rows = first_row + band_rows <= picture->frame->height ? band_rows : picture->frame->height - first_row;
        const source part = band_of(picture->frame, picture->v_samp, first_row, rows);
        cpixels_jpeg_encoder *encoder = band_encoder(picture->encoder, band);
        picture->status[band] = encode_whole(encoder, &part, picture->h_samp, picture->v_samp, picture->quality,
                                             picture->encoder->band_jpeg[band], picture->encoder->band_capacity[band],
                                             &picture->size[band]);
    }
}

/* How many threads may run at once: the CPUs this process is allowed (taskset, cpusets). */
static int usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return 1;
}

/* Where the start-of-scan marker of a JPEG libjpeg wrote is (every marker before it has a
 * length), or 0; and where its frame header (SOF0-2) is, in *frame_header (0 if none). */
static size_t start_of_scan(const uint8_t *jpeg, size_t size, size_t *frame_header) {
    size_t at = 2;
    *frame_header = 0;
    while (at + 4 <= size && jpeg[at] == 0xFF && jpeg[at + 1] != 0xDA) {
        if (jpeg[at + 1] >= 0xC0 && jpeg[at + 1] <= 0xC2) *frame_header = at;
        at += 2 + ((size_t)jpeg[at + 2] << 8 | jpeg[at + 3]);
    }
    return at + 4 <= size && jpeg[at] == 0xFF && jpeg[at + 1] == 0xDA ? at : 0;
}

/* The bands' JPEGs made one: band 0's headers, its frame header given the whole picture's
 * height, a restart interval of one band's MCUs (DRI, just before the scan, where libjpeg
 * writes it), then each band's compressed data after a restart marker (RST0 to RST7 in turn)
 * after the one before. Each band's data starts with the DC predictions at zero and ends padded
 * to a whole byte with one bits, as after a restart marker: the JPEG libjpeg writes for the
 * whole picture with that restart interval, byte for byte. */
static int join_bands(cpixels_jpeg_encoder *encoder, const banded_picture *picture, uint8_t *out, size_t capacity,
                      size_t *size) {
    size_t length = 0;
    for (int band = 0; band < picture->layout.count; band++) {
        const uint8_t *jpeg = encoder->band_jpeg[band];
        const size_t jpeg_size = picture->size[band];
        size_t frame_header;
        const size_t scan = start_of_scan(jpeg, jpeg_size, &frame_header);
        const size_t data = band == 0 ? scan : scan + 2 + ((size_t)jpeg[scan + 2] << 8 | jpeg[scan + 3]);
        if (scan == 0 || frame_header == 0 || data + 2 > jpeg_size || jpeg[jpeg_size - 2] != 0xFF || jpeg[jpeg_size - 1] != 0xD9) {
            snprintf(encoder->message, sizeof encoder->message, "band %d of the picture is not a JPEG libjpeg writes", band);
            return -1;
        }
        const size_t data_size = jpeg_size - 2 - data;
        const size_t before = band == 0 ? scan + 6 : 2; /* the headers and DRI, or the restart marker */
        if (length + before + data_size + 2 > capacity) {
            snprintf(encoder->message, sizeof encoder->message, "the JPEG does not fit in %zu bytes", capacity);
            return -1;
        }
        if (band == 0) {
            memcpy(out, jpeg, scan);
            out[frame_header + 5] = (uint8_t)(picture->frame->height >> 8);
            out[frame_header + 6] = (uint8_t)picture->frame->height;
            const uint8_t restart[6] = {0xFF, 0xDD, 0, 4, (uint8_t)(picture->layout.restart_interval >> 8),
                                        (uint8_t)picture->layout.restart_interval};
            memcpy(out + scan, restart, sizeof restart);
            length = scan + sizeof restart;
        } else {
            out[length++] = 0xFF;
            out[length++] = (uint8_t)(0xD0 + ((band - 1) & 7));
        }
        memcpy(out + length, jpeg + data, data_size);
        length += data_size;
    }
    out[length++] = 0xFF;
    out[length++] = 0xD9;
    *size = length;
    return 0;
}

/* `frame` compressed whole, or, when it is large, in bands side by side (one thread a CPU),
 * then joined into one JPEG with restart markers (see join_bands): a 1920x1080 frame in four
 * bands on two CPUs took ~0.57 of the time natively, 0.53-0.71 in the VM suite (docs/benchmarks.md). */
static int encode(cpixels_jpeg_encoder *encoder, const source *frame, int h_samp, int v_samp, int quality, uint8_t *out,
                  size_t capacity, size_t *size) {
    const band_layout layout = layout_of(frame->width, frame->height, h_samp, v_samp);
    if (layout.count == 1) return encode_whole(encoder, frame, h_samp, v_samp, quality, out, capacity, size);

    for (int band = 0; band < layout.count; band++) {
        if (band > 0 && !encoder->bands[band] && !(encoder->bands[band] = cpixels_jpeg_encoder_create())) goto out_of_memory;
        const size_t needed = worst_case_size(frame->width, layout.rows, h_samp, v_samp);
        if (encoder->band_capacity[band] < needed) {
            free(encoder->band_jpeg[band]);
            encoder->band_capacity[band] = 0;
            if (!(encoder->band_jpeg[band] = malloc(needed))) goto out_of_memory;
            encoder->band_capacity[band] = needed;
        }
    }
    banded_picture picture = {.encoder = encoder, .frame = frame, .layout = layout, .h_samp = h_samp, .v_samp = v_samp,
                              .quality = quality};
    atomic_init(&picture.next_band, 0);
    int threads = encoder->threads > 0 ? encoder->threads : usable_cpus();
    if (threads > layout.count) threads = layout.count;
    /* This thread compresses bands too; a helper that cannot be started leaves its bands to the
     * others. */
    pthread_t helpers[MAX_BANDS];
    int started = 0;
    while (started < threads - 1 && pthread_create(&helpers[started], NULL, compress_bands, &picture) == 0) started++;
    compress_bands(&picture);
    for (int helper = 0; helper < started; helper++) pthread_join(helpers[helper], NULL);

    for (int band = 0; band < layout.count; band++) {
        if (picture.status[band] != 0) {
            if (band > 0) memcpy(encoder->message, encoder->bands[band]->message, sizeof encoder->message);
            return -1;
        }
    }
    return join_bands(encoder, &picture, out, capacity, size);

out_of_memory:
    snprintf(encoder->message, sizeof encoder->message, "out of memory for the JPEG's bands");
    return -1;
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
