/* The demo service's handler ABI, version 1: what `phaseloop canary serve`
 * loads (dlopen) from libdemo_handler.so and calls for every request.
 *
 * A handler turns one request payload of a named kind into a response
 * payload. Kinds of the demo handler (zlib, compiled through phaseloop-cc):
 *   "deflate"    zlib stream of the payload (compress2, level 6);
 *   "roundtrip"  deflate then inflate, checked equal to the payload;
 *                8 bytes: compressed size and CRC-32 of the payload, each
 *                uint32 little endian;
 *   "crc32"      CRC-32 of the payload, 4 bytes little endian.
 *
 * Contract: phaseloop_handle is reentrant (any number of threads at once);
 * on PHASELOOP_HANDLER_OK *out holds *out_n bytes the caller releases with
 * phaseloop_free (*out may be NULL when *out_n is 0); on any other result
 * *out and *out_n are left NULL and 0. Payloads above
 * PHASELOOP_HANDLER_MAX_PAYLOAD are PHASELOOP_HANDLER_BAD_PAYLOAD. Only the
 * phaseloop_* symbols are exported; zlib stays private to the library, so
 * the zlib the policy compiled is the one that runs, never the host's.
 */
#ifndef PHASELOOP_DEMO_HANDLER_H_
#define PHASELOOP_DEMO_HANDLER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PHASELOOP_HANDLER_ABI_VERSION 1

#define PHASELOOP_HANDLER_OK 0
#define PHASELOOP_HANDLER_UNKNOWN_KIND 1 /* HTTP 404 */
#define PHASELOOP_HANDLER_BAD_PAYLOAD 2  /* HTTP 400 */
#define PHASELOOP_HANDLER_FAILED 3       /* HTTP 500, an SLI error */

#define PHASELOOP_HANDLER_MAX_PAYLOAD (64u << 20)

#define PHASELOOP_HANDLER_EXPORT __attribute__((visibility("default")))

/* PHASELOOP_HANDLER_ABI_VERSION of the library. */
PHASELOOP_HANDLER_EXPORT int phaseloop_handler_abi_version(void);

/* The kinds it serves, comma-separated ("deflate,roundtrip,crc32"). */
PHASELOOP_HANDLER_EXPORT const char* phaseloop_handler_kinds(void);

PHASELOOP_HANDLER_EXPORT int phaseloop_handle(const char* kind,
                                              const unsigned char* in,
                                              size_t n, unsigned char** out,
                                              size_t* out_n);

PHASELOOP_HANDLER_EXPORT void phaseloop_free(unsigned char* out);

#ifdef __cplusplus
}
#endif

#endif /* PHASELOOP_DEMO_HANDLER_H_ */
