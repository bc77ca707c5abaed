/*
 * Minimal streaming JSON writer: one compact line, no whitespace, commas
 * handled by the writer so workloads only say what to emit.
 * A NULL key means "no key" (top level or array element).
 */
#ifndef TRACELAB_JSON_H
#define TRACELAB_JSON_H

#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct {
    FILE *out;
    int depth;
    int has_items[JSON_MAX_DEPTH];
} json_writer;

void json_init(json_writer *w, FILE *out);
void json_begin_object(json_writer *w, const char *key);
void json_end_object(json_writer *w);
void json_begin_array(json_writer *w, const char *key);
void json_end_array(json_writer *w);
void json_int(json_writer *w, const char *key, long long value);
/* Finite doubles as %.15g; NaN and infinities (not JSON) as null. */
void json_double(json_writer *w, const char *key, double value);
void json_null(json_writer *w, const char *key);
void json_string(json_writer *w, const char *key, const char *value);
/* Addresses and handles: "0x..." strings, because JSON numbers lose
 * precision above 2^53 in most readers. */
void json_hex(json_writer *w, const char *key, unsigned long long value);

#endif
