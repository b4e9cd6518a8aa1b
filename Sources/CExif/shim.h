#ifndef CAMROLL_CEXIF_SHIM_H
#define CAMROLL_CEXIF_SHIM_H
/*
 * libexif, and setters that give an entry exactly the format and value asked for:
 * exif_entry_initialize() only knows defaults for some tags (not Make, Model or Software), and
 * an entry's data must come from libexif's own allocator, which Swift cannot reach cleanly.
 */
#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>
#include <stdlib.h>
#include <string.h>

/* Replaces (or adds) `tag` in `ifd` with `size` bytes of `format` holding `components` values. */
static inline int cexif_set(ExifData *data, ExifIfd ifd, ExifTag tag, ExifFormat format,
                            unsigned long components, const unsigned char *bytes, unsigned int size) {
    ExifContent *content = data->ifd[ifd];
    ExifEntry *old = exif_content_get_entry(content, tag);
    if (old) exif_content_remove_entry(content, old);
    ExifMem *mem = exif_mem_new_default();
    if (!mem) return -1;
    ExifEntry *entry = exif_entry_new_mem(mem);
    unsigned char *copy = entry ? exif_mem_alloc(mem, size) : NULL;
    if (!copy) {
        if (entry) exif_entry_unref(entry);
        exif_mem_unref(mem);
        return -1;
    }
    memcpy(copy, bytes, size);
    entry->data = copy;
    entry->size = size;
    entry->tag = tag;
    entry->format = format;
    entry->components = components;
    exif_content_add_entry(content, entry);
    exif_entry_unref(entry);
    exif_mem_unref(mem);
    return 0;
}

static inline int cexif_set_ascii(ExifData *data, ExifIfd ifd, ExifTag tag, const char *text) {
    unsigned int size = (unsigned int)strlen(text) + 1;
    return cexif_set(data, ifd, tag, EXIF_FORMAT_ASCII, size, (const unsigned char *)text, size);
}

static inline int cexif_set_short(ExifData *data, ExifIfd ifd, ExifTag tag, ExifShort value) {
    unsigned char bytes[2];
    exif_set_short(bytes, exif_data_get_byte_order(data), value);
    return cexif_set(data, ifd, tag, EXIF_FORMAT_SHORT, 1, bytes, 2);
}

static inline int cexif_set_long(ExifData *data, ExifIfd ifd, ExifTag tag, ExifLong value) {
    unsigned char bytes[4];
    exif_set_long(bytes, exif_data_get_byte_order(data), value);
    return cexif_set(data, ifd, tag, EXIF_FORMAT_LONG, 1, bytes, 4);
}

static inline int cexif_set_rational(ExifData *data, ExifIfd ifd, ExifTag tag, ExifLong numerator, ExifLong denominator) {
    unsigned char bytes[8];
    ExifRational value = {numerator, denominator};
    exif_set_rational(bytes, exif_data_get_byte_order(data), value);
    return cexif_set(data, ifd, tag, EXIF_FORMAT_RATIONAL, 1, bytes, 8);
}

/* An UNDEFINED value of `text`'s bytes, without a terminator (ExifVersion "0232"). */
static inline int cexif_set_undefined(ExifData *data, ExifIfd ifd, ExifTag tag, const char *text) {
    unsigned int size = (unsigned int)strlen(text);
    return cexif_set(data, ifd, tag, EXIF_FORMAT_UNDEFINED, size, (const unsigned char *)text, size);
}

/* Removes every entry of `ifd` (the GPS directory, for --strip-gps); libexif writes no empty one. */
static inline void cexif_clear_ifd(ExifData *data, ExifIfd ifd) {
    ExifContent *content = data->ifd[ifd];
    while (content && content->count > 0) exif_content_remove_entry(content, content->entries[content->count - 1]);
}

/* UserComment: an 8-byte character-code prefix, then the text (EXIF 2.3 §4.6.5). */
static inline int cexif_set_user_comment(ExifData *data, const char *text) {
    size_t length = strlen(text);
    unsigned char *bytes = malloc(8 + length);
    if (!bytes) return -1;
    memcpy(bytes, "ASCII\0\0\0", 8);
    memcpy(bytes + 8, text, length);
    int status = cexif_set(data, EXIF_IFD_EXIF, EXIF_TAG_USER_COMMENT, EXIF_FORMAT_UNDEFINED,
                           8 + length, bytes, (unsigned int)(8 + length));
    free(bytes);
    return status;
}

/* The SHORT value of `tag` in `ifd`, or -1 when there is none. */
static inline int cexif_get_short(ExifData *data, ExifIfd ifd, ExifTag tag) {
    ExifEntry *entry = exif_content_get_entry(data->ifd[ifd], tag);
    if (!entry || entry->format != EXIF_FORMAT_SHORT || entry->components < 1 || entry->size < 2) return -1;
    return exif_get_short(entry->data, exif_data_get_byte_order(data));
}

static inline int cexif_has(ExifData *data, ExifIfd ifd, ExifTag tag) {
    return exif_content_get_entry(data->ifd[ifd], tag) != NULL;
}

/* Drops the embedded thumbnail: after a crop or resize it no longer shows the picture. */
static inline void cexif_drop_thumbnail(ExifData *data) {
    free(data->data); /* exif_data_new* allocate it with the default allocator (malloc) */
    data->data = NULL;
    data->size = 0;
}
#endif
