/* The demo service's handler over zlib (phaseloop_handler.h). */
#include "phaseloop_handler.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const unsigned char kEmpty[1] = {0};

static void PutLe32(unsigned char* p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

/* compress2 at level 6 into a fresh buffer; 0 on success. */
static int Deflate(const unsigned char* in, size_t n, unsigned char** out,
                   uLongf* out_n) {
  const uLong bound = compressBound((uLong)n);
  unsigned char* buffer = malloc(bound);
  if (buffer == NULL) return -1;
  uLongf size = bound;
  if (compress2(buffer, &size, in, (uLong)n, 6) != Z_OK) {
    free(buffer);
    return -1;
  }
  *out = buffer;
  *out_n = size;
  return 0;
}

static int HandleDeflate(const unsigned char* in, size_t n,
                         unsigned char** out, size_t* out_n) {
  unsigned char* stream = NULL;
  uLongf size = 0;
  if (Deflate(in, n, &stream, &size) != 0) return PHASELOOP_HANDLER_FAILED;
  *out = stream;
  *out_n = size;
  return PHASELOOP_HANDLER_OK;
}

static int HandleRoundtrip(const unsigned char* in, size_t n,
                           unsigned char** out, size_t* out_n) {
  unsigned char* stream = NULL;
  uLongf stream_size = 0;
  if (Deflate(in, n, &stream, &stream_size) != 0) {
    return PHASELOOP_HANDLER_FAILED;
  }
  /* One spare byte: an inflate that yields more than n bytes is caught. */
  unsigned char* back = malloc(n + 1);
  uLongf back_size = n + 1;
  const int inflated =
      back == NULL ? Z_MEM_ERROR
                   : uncompress(back, &back_size, stream, stream_size);
  const int same = inflated == Z_OK && back_size == n &&
                   (n == 0 || memcmp(back, in, n) == 0);
  free(back);
  free(stream);
  if (!same) return PHASELOOP_HANDLER_FAILED;
  unsigned char* result = malloc(8);
  if (result == NULL) return PHASELOOP_HANDLER_FAILED;
  PutLe32(result, (uint32_t)stream_size);
  PutLe32(result + 4, (uint32_t)crc32(0L, in, (uInt)n));
  *out = result;
  *out_n = 8;
  return PHASELOOP_HANDLER_OK;
}

static int HandleCrc32(const unsigned char* in, size_t n, unsigned char** out,
                       size_t* out_n) {
  unsigned char* result = malloc(4);
  if (result == NULL) return PHASELOOP_HANDLER_FAILED;
  PutLe32(result, (uint32_t)crc32(0L, in, (uInt)n));
  *out = result;
  *out_n = 4;
  return PHASELOOP_HANDLER_OK;
}

int phaseloop_handler_abi_version(void) {
  return PHASELOOP_HANDLER_ABI_VERSION;
}

const char* phaseloop_handler_kinds(void) { return "deflate,roundtrip,crc32"; }

int phaseloop_handle(const char* kind, const unsigned char* in, size_t n,
                     unsigned char** out, size_t* out_n) {
  *out = NULL;
  *out_n = 0;
  if (kind == NULL) return PHASELOOP_HANDLER_UNKNOWN_KIND;
  int (*handle)(const unsigned char*, size_t, unsigned char**, size_t*) =
      strcmp(kind, "deflate") == 0     ? HandleDeflate
      : strcmp(kind, "roundtrip") == 0 ? HandleRoundtrip
      : strcmp(kind, "crc32") == 0     ? HandleCrc32
                                       : NULL;
  if (handle == NULL) return PHASELOOP_HANDLER_UNKNOWN_KIND;
  if (n > PHASELOOP_HANDLER_MAX_PAYLOAD || (in == NULL && n > 0)) {
    return PHASELOOP_HANDLER_BAD_PAYLOAD;
  }
  return handle(in == NULL ? kEmpty : in, n, out, out_n);
}

void phaseloop_free(unsigned char* out) { free(out); }
