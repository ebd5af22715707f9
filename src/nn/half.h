/* half — the per-element conversions of mixed precision (--precision fp16|bf16): fp32 to IEEE half and to
 * bfloat16, round to nearest even, and back, on the bits. The back-ends share them: cuDNN's conversion kernels
 * (cudnn_kernels.cu) on the device, dnnl's im2col on the host; tests/test_cudnn.c checks them (against the
 * compiler's _Float16 and an independent rounding), so what runs is what was tested. No CUDA header needed. */
#ifndef SD_NN_HALF_H
#define SD_NN_HALF_H

#include "nn/kernels.h"   /* SD_HD */

#include <stdint.h>
#include <string.h>

SD_HD uint32_t nn_f32_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
SD_HD float nn_bits_f32(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }

/* fp32 -> IEEE binary16, round to nearest even: overflow to inf (from 65520 up), subnormals below 2^-14, NaN stays a
 * (quiet) NaN. */
SD_HD uint16_t nn_f32_to_f16(float f) {
    const uint32_t x = nn_f32_bits(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u)                                             /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);          /* >= 65520: rounds to inf */
    if (a >= 0x38800000u) {                                           /* a normal half: rebias 127 -> 15 */
        uint32_t r = a - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u);                               /* to nearest, ties to even */
        return (uint16_t)(sign | (r >> 13));
    }
    if (a < 0x33000000u) return (uint16_t)sign;                       /* <= 2^-25 (a tie): 0 */
    /* a subnormal half q * 2^-24: q = significand * 2^(e - 126), e = 102..112, rounded to nearest even */
    const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);                                      /* q = 1024 is the smallest normal: right */
}

/* IEEE binary16 -> fp32 (exact). */
SD_HD float nn_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu) return nn_bits_f32(sign | 0x7f800000u | (m << 13));      /* inf, NaN */
    if (e) return nn_bits_f32(sign | ((e + 112u) << 23) | (m << 13));         /* normal */
    if (!m) return nn_bits_f32(sign);                                        /* zero */
    e = 113u;                                                                /* subnormal m * 2^-24: normalise */
    while (!(m & 0x400u)) { m <<= 1; e--; }
    return nn_bits_f32(sign | (e << 23) | ((m & 0x3ffu) << 13));
}

/* fp32 -> bfloat16 (the top 16 bits), round to nearest even; NaN stays a quiet NaN, overflow rounds to inf. */
SD_HD uint16_t nn_f32_to_bf16(float f) {
    uint32_t x = nn_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* bfloat16 -> fp32 (exact). */
SD_HD float nn_bf16_to_f32(uint16_t b) { return nn_bits_f32((uint32_t)b << 16); }

#endif
