#ifndef PEREGRINE_CPNG_SHIM_H
#define PEREGRINE_CPNG_SHIM_H

/* libpng (Debian: libpng-dev) behind two complete operations, decode and encode.
 *
 * libpng reports errors by longjmp-ing out of the failing call. Swift cannot survive a longjmp
 * through its frames, so every libpng call happens here, in C, below a setjmp of our own; Swift sees
 * only a status code and a message. */

#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    PEREGRINE_PNG_OK = 0,
    PEREGRINE_PNG_NOT_PNG = 1,
    PEREGRINE_PNG_CORRUPT = 2,
    PEREGRINE_PNG_TOO_LARGE = 3,
    PEREGRINE_PNG_OUT_OF_MEMORY = 4,
    PEREGRINE_PNG_INVALID_ARGUMENT = 5,
};

#define PEREGRINE_PNG_MESSAGE_CAPACITY 160

/* A decoded image: 8-bit samples, 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA) channels. */
typedef struct {
    uint32_t source_width;  /* as the header says */
    uint32_t source_height;
    uint32_t width;         /* of `pixels`, after the box shrink */
    uint32_t height;
    uint32_t channels;
    uint32_t shrink;        /* the integer factor the image was box-averaged by while reading */
    unsigned char *pixels;  /* malloc'd; release with peregrine_png_free */
    char message[PEREGRINE_PNG_MESSAGE_CAPACITY];
} peregrine_png_image;

typedef struct {
    const unsigned char *data;
    size_t size;
    size_t offset;
    char *message;
} peregrine_png_reader;

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
    char *message;
} peregrine_png_writer;

static inline void peregrine_png_free(void *pointer) { free(pointer); }

static inline void peregrine_png_copy_message(char *message, const char *text) {
    if (message == NULL) return;
    snprintf(message, PEREGRINE_PNG_MESSAGE_CAPACITY, "%s", text ? text : "libpng error");
}

static void peregrine_png_on_error(png_structp png, png_const_charp text) {
    peregrine_png_copy_message((char *)png_get_error_ptr(png), text);
    png_longjmp(png, 1);
}

static void peregrine_png_on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void peregrine_png_read_bytes(png_structp png, png_bytep out, size_t length) {
    peregrine_png_reader *reader = (peregrine_png_reader *)png_get_io_ptr(png);
    if (length > reader->size - reader->offset) png_error(png, "the PNG data ends early (truncated file)");
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
}

/* Box-averages rows of `channels`-sample pixels into blocks of `shrink` × `shrink`, weighting colour
   by alpha so that transparent pixels do not darken the edges. */
typedef struct {
    uint32_t source_width, source_height, width, channels, shrink;
    uint64_t *sums;
    unsigned char *output;
    uint32_t rows_in_block;
    uint32_t output_row;
} peregrine_png_shrinker;

static inline void peregrine_png_shrinker_flush(peregrine_png_shrinker *s) {
    const uint32_t channels = s->channels;
    const int has_alpha = (channels == 2 || channels == 4);
    unsigned char *out = s->output + (size_t)s->output_row * s->width * channels;
    for (uint32_t bx = 0; bx < s->width; bx++) {
        uint32_t columns = s->source_width - bx * s->shrink;
        if (columns > s->shrink) columns = s->shrink;
        const uint64_t count = (uint64_t)columns * s->rows_in_block;
        uint64_t *sum = s->sums + (size_t)bx * channels;
        if (has_alpha) {
            const uint64_t alpha = sum[channels - 1];
            for (uint32_t c = 0; c + 1 < channels; c++) out[c] = alpha ? (unsigned char)((sum[c] + alpha / 2) / alpha) : 0;
            out[channels - 1] = (unsigned char)((alpha + count / 2) / count);
        } else {
            for (uint32_t c = 0; c < channels; c++) out[c] = (unsigned char)((sum[c] + count / 2) / count);
        }
        out += channels;
    }
    memset(s->sums, 0, (size_t)s->width * channels * sizeof(uint64_t));
    s->rows_in_block = 0;
    s->output_row += 1;
}

static inline void peregrine_png_shrinker_add_row(peregrine_png_shrinker *s, const unsigned char *row, uint32_t y) {
    const uint32_t channels = s->channels;
    if (s->shrink == 1) {
        memcpy(s->output + (size_t)y * s->width * channels, row, (size_t)s->width * channels);
        return;
    }
    const int has_alpha = (channels == 2 || channels == 4);
    uint64_t *sum = s->sums;
    uint32_t in_block = 0;
    for (uint32_t x = 0; x < s->source_width; x++) {
        if (has_alpha) {
            const uint64_t alpha = row[channels - 1];
            for (uint32_t c = 0; c + 1 < channels; c++) sum[c] += (uint64_t)row[c] * alpha;
            sum[channels - 1] += alpha;
        } else {
            for (uint32_t c = 0; c < channels; c++) sum[c] += row[c];
        }
        row += channels;
        if (++in_block == s->shrink) {
            in_block = 0;
            sum += channels;
        }
    }
    s->rows_in_block += 1;
    if (s->rows_in_block == s->shrink || y + 1 == s->source_height) peregrine_png_shrinker_flush(s);
}

/* Decodes a whole PNG held in memory to 8-bit grey, grey + alpha, RGB or RGBA.
 *
 * Limits are checked after the header and before any pixel memory is allocated: more than
 * `max_source_pixels` in the file, or more than `max_decoded_pixels` in memory at once, answers
 * PEREGRINE_PNG_TOO_LARGE. When `target_height` is not 0 the image is box-averaged by the largest
 * integer factor that keeps at least `target_height` rows, row by row while reading, so a
 * non-interlaced image never needs its full size in memory. Every libpng error, including a
 * truncated file, answers PEREGRINE_PNG_CORRUPT with libpng's message. */
static inline int peregrine_png_decode(const unsigned char *data, size_t size, uint64_t max_source_pixels,
                                       uint64_t max_decoded_pixels, uint32_t target_height,
                                       peregrine_png_image *image) {
    if (image == NULL) return PEREGRINE_PNG_INVALID_ARGUMENT;
    memset(image, 0, sizeof(*image));
    if (data == NULL || size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        peregrine_png_copy_message(image->message, "not a PNG file (bad signature)");
        return PEREGRINE_PNG_NOT_PNG;
    }
    peregrine_png_reader reader = {data, size, 0, image->message};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, image->message, peregrine_png_on_error,
                                             peregrine_png_on_warning);
    if (png == NULL) return PEREGRINE_PNG_OUT_OF_MEMORY;
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return PEREGRINE_PNG_OUT_OF_MEMORY;
    }

    /* Everything a longjmp may leave behind; volatile so that its values survive the jump. */
    unsigned char *volatile row = NULL;
    unsigned char *volatile full = NULL;
    png_bytep *volatile row_pointers = NULL;
    uint64_t *volatile sums = NULL;
    unsigned char *volatile output = NULL;
    volatile int status = PEREGRINE_PNG_CORRUPT;

    if (setjmp(png_jmpbuf(png))) {
        free(row);
        free(full);
        free(row_pointers);
        free(sums);
        free(output);
        png_destroy_read_struct(&png, &info, NULL);
        image->pixels = NULL;
        return status;
    }

    png_set_read_fn(png, &reader, peregrine_png_read_bytes);
    png_set_user_limits(png, 1u << 20, 1u << 20);
    png_set_chunk_malloc_max(png, 8u << 20);
    png_set_chunk_cache_max(png, 1000);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_read_info(png, info);

    const uint32_t width = png_get_image_width(png, info);
    const uint32_t height = png_get_image_height(png, info);
    const int bit_depth = png_get_bit_depth(png, info);
    const int color_type = png_get_color_type(png, info);
    image->source_width = width;
    image->source_height = height;
    if (width == 0 || height == 0) png_error(png, "the PNG header gives an empty image");
    if ((uint64_t)width * height > max_source_pixels) {
        status = PEREGRINE_PNG_TOO_LARGE;
        png_error(png, "the PNG image has more pixels than the decoding limit allows");
    }

    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_scale_16(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);

    const uint32_t channels = png_get_channels(png, info);
    const size_t row_bytes = png_get_rowbytes(png, info);
    if (channels < 1 || channels > 4 || row_bytes != (size_t)width * channels)
        png_error(png, "unexpected PNG row layout after transformations");

    uint32_t shrink = 1;
    if (target_height > 0 && height / target_height > 1) shrink = height / target_height;
    const uint32_t out_width = (width + shrink - 1) / shrink;
    const uint32_t out_height = (height + shrink - 1) / shrink;
    if ((uint64_t)out_width * out_height > max_decoded_pixels ||
        (passes > 1 && (uint64_t)width * height > max_decoded_pixels)) {
        status = PEREGRINE_PNG_TOO_LARGE;
        png_error(png, "the decoded PNG image would exceed the decoding limit");
    }

    status = PEREGRINE_PNG_OUT_OF_MEMORY;
    output = (unsigned char *)malloc((size_t)out_width * out_height * channels);
    if (output == NULL) png_error(png, "out of memory for the decoded image");
    if (shrink > 1) {
        sums = (uint64_t *)calloc((size_t)out_width * channels, sizeof(uint64_t));
        if (sums == NULL) png_error(png, "out of memory for the shrink buffer");
    }
    peregrine_png_shrinker shrinker = {width, height, out_width, channels, shrink, sums, output, 0, 0};

    if (passes > 1) {
        full = (unsigned char *)malloc(row_bytes * height);
        row_pointers = (png_bytep *)malloc(sizeof(png_bytep) * height);
        if (full == NULL || row_pointers == NULL) png_error(png, "out of memory for an interlaced image");
        for (uint32_t y = 0; y < height; y++) row_pointers[y] = full + row_bytes * y;
        status = PEREGRINE_PNG_CORRUPT;
        png_read_image(png, row_pointers);
        for (uint32_t y = 0; y < height; y++) peregrine_png_shrinker_add_row(&shrinker, full + row_bytes * y, y);
    } else {
        row = (unsigned char *)malloc(row_bytes);
        if (row == NULL) png_error(png, "out of memory for a row");
        status = PEREGRINE_PNG_CORRUPT;
        for (uint32_t y = 0; y < height; y++) {
            png_read_row(png, row, NULL);
            peregrine_png_shrinker_add_row(&shrinker, row, y);
        }
    }

    free(row);
    free(full);
    free(row_pointers);
    free(sums);
    png_destroy_read_struct(&png, &info, NULL);
    image->width = out_width;
    image->height = out_height;
    image->channels = channels;
    image->shrink = shrink;
    image->pixels = output;
    return PEREGRINE_PNG_OK;
}

static void peregrine_png_write_bytes(png_structp png, png_bytep bytes, size_t length) {
    peregrine_png_writer *writer = (peregrine_png_writer *)png_get_io_ptr(png);
    if (length > writer->capacity - writer->size) {
        size_t capacity = writer->capacity ? writer->capacity : 4096;
        while (capacity - writer->size < length) {
            if (capacity > SIZE_MAX / 2) png_error(png, "PNG output too large");
            capacity *= 2;
        }
        unsigned char *grown = (unsigned char *)realloc(writer->data, capacity);
        if (grown == NULL) png_error(png, "out of memory for the PNG output");
        writer->data = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->data + writer->size, bytes, length);
    writer->size += length;
}

static void peregrine_png_flush(png_structp png) { (void)png; }

/* Encodes 8-bit pixels with 1 to 4 channels (grey, grey + alpha, RGB, RGBA) as a PNG at zlib
 * `compression_level` (0–9). On success `*out_data` is a malloc'd buffer for peregrine_png_free. */
static inline int peregrine_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height,
                                       uint32_t channels, int compression_level, unsigned char **out_data,
                                       size_t *out_size, char *message) {
    if (out_data == NULL || out_size == NULL) return PEREGRINE_PNG_INVALID_ARGUMENT;
    *out_data = NULL;
    *out_size = 0;
    if (pixels == NULL || width == 0 || height == 0 || channels < 1 || channels > 4 || width > (1u << 20) ||
        height > (1u << 20)) {
        peregrine_png_copy_message(message, "invalid image to encode");
        return PEREGRINE_PNG_INVALID_ARGUMENT;
    }
    static const int color_types[4] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                       PNG_COLOR_TYPE_RGB_ALPHA};
    /* On the heap, behind a volatile pointer: the write callback grows it between setjmp and a
       possible longjmp, and the error path must see its final state. */
    peregrine_png_writer *volatile writer = (peregrine_png_writer *)calloc(1, sizeof(peregrine_png_writer));
    if (writer == NULL) return PEREGRINE_PNG_OUT_OF_MEMORY;
    writer->message = message;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, peregrine_png_on_error,
                                              peregrine_png_on_warning);
    if (png == NULL) {
        free(writer);
        return PEREGRINE_PNG_OUT_OF_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        free(writer);
        return PEREGRINE_PNG_OUT_OF_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        free(writer->data);
        free(writer);
        png_destroy_write_struct(&png, &info);
        return PEREGRINE_PNG_CORRUPT;
    }
    png_set_write_fn(png, writer, peregrine_png_write_bytes, peregrine_png_flush);
    if (compression_level < 0) compression_level = 0;
    if (compression_level > 9) compression_level = 9;
    png_set_compression_level(png, compression_level);
    png_set_IHDR(png, info, width, height, 8, color_types[channels - 1], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    const size_t row_bytes = (size_t)width * channels;
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + row_bytes * y));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out_data = writer->data;
    *out_size = writer->size;
    free(writer);
    return PEREGRINE_PNG_OK;
}

#endif
