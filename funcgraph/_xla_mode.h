/* The floating-point mode XLA's CPU code runs in, for C code that must compute as it
 * does: subnormal inputs of arithmetic read as zero and subnormal results are flushed to
 * zero (the x86 MXCSR's DAZ and FTZ bits).  ENTER_XLA_MODE saves the caller's mode and
 * sets XLA's; LEAVE_XLA_MODE restores it, so code outside (NumPy called by the user)
 * keeps IEEE subnormals.  Elsewhere than x86 the mode is left as it is. */
#ifndef FUNCGRAPH_XLA_MODE_H
#define FUNCGRAPH_XLA_MODE_H
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define XLA_MODE_BITS 0x8040u /* MXCSR: FTZ (bit 15) and DAZ (bit 6) */
#define ENTER_XLA_MODE unsigned int saved_csr = _mm_getcsr(); _mm_setcsr(saved_csr | XLA_MODE_BITS);
#define LEAVE_XLA_MODE _mm_setcsr(saved_csr);
#define HAVE_XLA_MODE 1
#else
#define ENTER_XLA_MODE
#define LEAVE_XLA_MODE
#define HAVE_XLA_MODE 0
#endif
#endif
