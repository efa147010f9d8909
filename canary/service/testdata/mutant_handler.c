/* Test-only: the demo handler with a miscompile's symptoms, for showing the
 * handler check catches them. MUTANT_CORRUPT flips one bit in the middle of
 * `deflate` outputs over 1000 bytes (a wrong result that still looks
 * plausible); MUTANT_CRASH aborts on `roundtrip` of 64 KiB or more (a
 * candidate that dies on some inputs); MUTANT_FAIL answers `roundtrip` of
 * 64 KiB or more with PHASELOOP_HANDLER_FAILED (a handler error). */
#define phaseloop_handle phaseloop_handle_correct
#include "canary/service/demo_workspace/handler.c"
#undef phaseloop_handle

PHASELOOP_HANDLER_EXPORT int phaseloop_handle(const char* kind,
                                              const unsigned char* in,
                                              size_t n, unsigned char** out,
                                              size_t* out_n) {
#ifdef MUTANT_CRASH
  if (kind != NULL && strcmp(kind, "roundtrip") == 0 && n >= 65536) abort();
#endif
#ifdef MUTANT_FAIL
  if (kind != NULL && strcmp(kind, "roundtrip") == 0 && n >= 65536) {
    *out = NULL;
    *out_n = 0;
    return PHASELOOP_HANDLER_FAILED;
  }
#endif
  const int code = phaseloop_handle_correct(kind, in, n, out, out_n);
#ifdef MUTANT_CORRUPT
  if (code == PHASELOOP_HANDLER_OK && strcmp(kind, "deflate") == 0 &&
      *out_n > 1000) {
    (*out)[*out_n / 2] ^= 0x10;
  }
#endif
  return code;
}
