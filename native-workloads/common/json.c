#include "json.h"

#include <math.h>

void json_init(json_writer *w, FILE *out)
{
    w->out = out;
    w->depth = 0;
    w->has_items[0] = 0;
}

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void prefix(json_writer *w, const char *key)
{
    if (w->has_items[w->depth])
        fputc(',', w->out);
    w->has_items[w->depth] = 1;
    if (key != NULL) {
        write_escaped(w->out, key);
        fputc(':', w->out);
    }
}

static void open_scope(json_writer *w, const char *key, char bracket)
{
    prefix(w, key);
    fputc(bracket, w->out);
    if (w->depth + 1 < JSON_MAX_DEPTH)
        w->depth++;
    w->has_items[w->depth] = 0;
}

static void close_scope(json_writer *w, char bracket)
{
    fputc(bracket, w->out);
    if (w->depth > 0)
        w->depth--;
}

void json_begin_object(json_writer *w, const char *key) { open_scope(w, key, '{'); }
void json_end_object(json_writer *w) { close_scope(w, '}'); }
void json_begin_array(json_writer *w, const char *key) { open_scope(w, key, '['); }
void json_end_array(json_writer *w) { close_scope(w, ']'); }

void json_int(json_writer *w, const char *key, long long value)
{
    prefix(w, key);
    fprintf(w->out, "%lld", value);
}

void json_null(json_writer *w, const char *key)
{
    prefix(w, key);
    fputs("null", w->out);
}

void json_string(json_writer *w, const char *key, const char *value)
{
    prefix(w, key);
    write_escaped(w->out, value);
}

void json_hex(json_writer *w, const char *key, unsigned long long value)
{
    prefix(w, key);
    fprintf(w->out, "\"0x%llx\"", value);
}

void json_double(json_writer *w, const char *key, double value)
{
    if (!isfinite(value)) {
        json_null(w, key);
        return;
    }
    prefix(w, key);
    fprintf(w->out, "%.15g", value);
}
