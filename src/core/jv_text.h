/* jv_text — jv's private helper shared by the reader (jv.c) and the accessors (jv_get.c). */
#ifndef SD_CORE_JV_TEXT_H
#define SD_CORE_JV_TEXT_H

#include <stddef.h>

/* Copy text (valid UTF-8, from the document) into out for quoting in a one-line message: control
 * characters are escaped, and long text is cut at a character boundary with "...". */
void jv_clip_text(const char *text, size_t len, char *out, size_t n);

#endif
