#ifndef CAMROLL_CPIXELS_H
#define CAMROLL_CPIXELS_H
/*
 * The per-pixel loops of camroll's JPEG path, in C so that the compiler vectorizes them: a
 * YUYV frame split into the planes JPEG compresses, with the limited-range expansion (luma
 * 16–235, chroma 16–240, to JPEG's 0–255) on the way; pictures (a frame, a plane) averaged down for a thumbnail;
 * pictures resampled to another size (resample.c). And the encoder that uses them a strip of rows at a time.
 */
#include <stddef.h>
#include <stdint.h>

/* Splits `height` rows of `width` YUYV pixels (`stride` bytes a row; `width` even) into a luma
 * plane of width x height and two chroma planes of width/2 x height (`luma_stride` and
 * `chroma_stride` bytes a row), expanding limited range to full unless `full_range`. */
void cpixels_yuyv_split(const uint8_t *yuyv, size_t stride, int width, int height, uint8_t *luma, size_t luma_stride,
                        uint8_t *cb, uint8_t *cr, size_t chroma_stride, int full_range);

/* YUV frames to JPEG through libjpeg's raw-data interface (yuv_jpeg.c), with the frame's own
 * subsampling: a strip of rows at a time (8, or 16 luma rows for 4:2:0) split or copied into
 * planes that stay in the CPU's cache while libjpeg compresses them, where splitting a YUYV
 * frame whole first (into 4 MB at 1920x1080) and compressing the planes after took ~0.5 ms a
 * frame more. The same bytes as turbojpeg's tjCompressFromYUVPlanes of whole planes (its DCT
 * choice and padding; tests compare them) — except that a picture of 32 rows of MCUs or more
 * (4:2:2 from 256 rows, 4:2:0 from 512) is compressed in four bands of rows at once, one thread
 * a CPU, joined at restart markers: the same pixels, and the same bytes on any machine. An
 * encoder is reused from frame to frame, by one thread at a time. */
typedef struct cpixels_jpeg_encoder cpixels_jpeg_encoder;
cpixels_jpeg_encoder *cpixels_jpeg_encoder_create(void); /* NULL when out of memory */
void cpixels_jpeg_encoder_destroy(cpixels_jpeg_encoder *encoder);
/* At most `threads` threads compress a picture's bands (0, the default: one a CPU the process
 * may use). */
void cpixels_jpeg_encoder_set_threads(cpixels_jpeg_encoder *encoder, int threads);
/* The 4:2:2 JPEG of `height` rows of `width` YUYV pixels (`stride` bytes a row; `width` even)
 * at `quality` (1-100), limited range expanded to JPEG's full range unless `full_range`,
 * written to `out`: 0 and its length in *size, or -1 (then cpixels_jpeg_encoder_error says
 * why), also when it does not fit in `capacity` bytes. */
int cpixels_jpeg_encode_yuyv(cpixels_jpeg_encoder *encoder, const uint8_t *yuyv, size_t stride, int width, int height,
                             int full_range, int quality, uint8_t *out, size_t capacity, size_t *size);
/* The same for a 4:2:0 frame of three packed planes one after another (I420, YU12): luma
 * width x height, then Cb and Cr of (width+1)/2 x (height+1)/2 each. */
int cpixels_jpeg_encode_i420(cpixels_jpeg_encoder *encoder, const uint8_t *planes, int width, int height,
                             int full_range, int quality, uint8_t *out, size_t capacity, size_t *size);
/* The same for a 4:4:4 picture of three planes of width x height one after another (a
 * thumbnail): the JPEG library's code a YUYV frame has already run, none of turbojpeg's. */
int cpixels_jpeg_encode_yuv444(cpixels_jpeg_encoder *encoder, const uint8_t *planes, int width, int height,
                               int full_range, int quality, uint8_t *out, size_t capacity, size_t *size);
const char *cpixels_jpeg_encoder_error(const cpixels_jpeg_encoder *encoder);

/* Copies `count` samples of a plane, expanding limited range to full (`chroma`: 16–240 around
 * 128; else luma, 16–235). */
void cpixels_expand_plane(const uint8_t *from, uint8_t *to, size_t count, int chroma);

/* A picture of width x height pixels of `channels` interleaved samples (`stride` bytes a row)
 * reduced to to_width x to_height (not larger), rows packed: each pixel's samples the means of
 * the block of pixels it covers; the blocks tile the picture, so every pixel counts once. 0, or
 * -1 when out of memory. */
int cpixels_box_average(const uint8_t *from, size_t stride, int width, int height, int channels, uint8_t *to,
                        int to_width, int to_height);

/*
 * Resampling a picture to another size (resample.c): Lanczos-3, separable (each row, then each
 * column), the weights computed once per output column and row and normalised to sum 1; when
 * shrinking the kernel is widened by the scale factor, so that detail finer than the smaller
 * picture can hold is filtered out instead of aliasing into it. In linear light (sRGB decoded
 * through a 256-entry table, encoded again through a finer one), or on the sRGB codes.
 */
/* `width` x `height` packed RGB pixels (`from_stride` bytes a row) resampled into `to_width` x
 * `to_height` at `to` (`to_stride` bytes a row), in linear light unless `linear_light` is 0.
 * 0, or -1 when a size is not positive or the filter's memory cannot be had (its sizes are
 * checked for overflow: the weights, and as many rows of the output at floating point as a column
 * has taps, about 6 times the scale factor). */
int cpixels_resize_rgb(const uint8_t *from, size_t from_stride, int width, int height, uint8_t *to, size_t to_stride,
                       int to_width, int to_height, int linear_light);

/* 1 when malloc can give `bytes` now (asked for and given back at once), else 0: ImageMemory's
 * check before a picture's array is made. In C, with the block kept in use, because the Swift
 * optimizer drops a malloc whose block is only freed: in a release build the check always
 * passed, and the array's own allocation then stopped the process (exit 134) where a picture
 * too large for memory is bad input (65). */
int cpixels_can_allocate(size_t bytes);

/* What the expansions give for one sample (for the tests). */
uint8_t cpixels_expand_luma(uint8_t value);
uint8_t cpixels_expand_chroma(uint8_t value);

#endif
