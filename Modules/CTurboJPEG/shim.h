#ifndef PEREGRINE_CTURBOJPEG_SHIM_H
#define PEREGRINE_CTURBOJPEG_SHIM_H

/* libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev). Its errors are reported through return
   codes (libjpeg's longjmp is handled inside the library), so Swift calls it directly. */
#include <stddef.h>
#include <turbojpeg.h>

/* The flags Peregrine decodes with: stop a progressive image after a bounded number of scans (a
   denial-of-service guard against files with thousands of tiny scans). */
static inline int peregrine_tj_decode_flags(void) { return TJFLAG_LIMITSCANS; }

#endif
