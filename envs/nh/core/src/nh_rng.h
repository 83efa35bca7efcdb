/*
 * nh_rng.h: numpy's PCG64 bit generator and the two Generator draws the NH engine makes, bit for bit.
 *
 * Why a copy of numpy rather than a generator of our own: the Python engine (the reference) draws every
 * random number from one `numpy.random.Generator(PCG64)` (spec §16.6), and the trajectory fingerprints
 * pin those draws. Reproducing numpy exactly keeps seeds, fingerprints and golden cases meaning the same
 * in both engines. The compiled core never seeds itself: it takes the state of a numpy Generator that
 * the Python engine's own seeding made (`Generator.bit_generator.state`), see docs/compiled-core.md.
 *
 * What is reproduced (numpy 1.26 .. 2.x, `numpy/random/src/pcg64/pcg64.h` and
 * `numpy/random/src/distributions/distributions.c`):
 *   - the 128-bit LCG step `state = state * MULT + inc`, then the XSL-RR output of the new state;
 *   - `next_uint32`: one 64-bit output serves two calls, low half first; the high half waits in
 *     `has_uint32` / `uinteger`, which are part of the bit generator's state and persist across draws;
 *   - `Generator.random()`: `(next_uint64 >> 11) * 2**-53`;
 *   - `Generator.integers(low, high)` with int64 dtype (what Python ints pick): the inclusive range
 *     `rng = high - 1 - low`; `rng == 0` draws nothing; `rng < 2**32 - 1` uses Lemire's method on
 *     32-bit draws; `rng == 2**32 - 1` is one raw 32-bit draw; `rng == 2**64 - 1` one raw 64-bit draw;
 *     anything else Lemire's method on 64-bit draws. Generator always uses Lemire (never the mask).
 *
 * Needs a compiler with `unsigned __int128` (GCC, Clang), as numpy's fast path does.
 */
#ifndef NH_RNG_H
#define NH_RNG_H

#include <stdint.h>

typedef unsigned __int128 nh_u128;

/* PCG_DEFAULT_MULTIPLIER_128 of pcg64.h: 0x2360ED051FC65DA4_4385DF649FCCF645. */
#define NH_PCG64_MULT_HIGH UINT64_C(0x2360ED051FC65DA4)
#define NH_PCG64_MULT_LOW UINT64_C(0x4385DF649FCCF645)
#define NH_RNG_DOUBLE_SHIFT 11                        /* next_double keeps the top 53 bits */
#define NH_RNG_DOUBLE_SCALE (1.0 / 9007199254740992.0) /* 2**-53 */

/* The whole state of numpy's PCG64 bit generator, as `bit_generator.state` shows it. */
typedef struct nh_rng {
    nh_u128 state;
    nh_u128 inc;
    int has_uint32;    /* 1 when `uinteger` holds the unused high half of the last 64-bit output */
    uint32_t uinteger; /* that high half */
} nh_rng;

static inline nh_u128 nh_u128_make(uint64_t high, uint64_t low) { return ((nh_u128)high << 64) | low; }

static inline uint64_t nh_rotr64(uint64_t value, unsigned int rot) {
    return (value >> rot) | (value << ((-rot) & 63u));
}

/* pcg64_random_r: step the LCG, then XSL-RR of the new state. */
static inline uint64_t nh_rng_next_uint64(nh_rng *rng) {
    rng->state = rng->state * nh_u128_make(NH_PCG64_MULT_HIGH, NH_PCG64_MULT_LOW) + rng->inc;
    uint64_t high = (uint64_t)(rng->state >> 64);
    uint64_t low = (uint64_t)rng->state;
    return nh_rotr64(high ^ low, (unsigned int)(rng->state >> 122));
}

/* pcg64_next32: low half now, high half on the next call. */
static inline uint32_t nh_rng_next_uint32(nh_rng *rng) {
    if (rng->has_uint32) {
        rng->has_uint32 = 0;
        return rng->uinteger;
    }
    uint64_t next = nh_rng_next_uint64(rng);
    rng->has_uint32 = 1;
    rng->uinteger = (uint32_t)(next >> 32);
    return (uint32_t)(next & 0xFFFFFFFFu);
}

/* Generator.random(): the spec's R() (§16.6). */
static inline double nh_rng_random(nh_rng *rng) {
    return (double)(nh_rng_next_uint64(rng) >> NH_RNG_DOUBLE_SHIFT) * NH_RNG_DOUBLE_SCALE;
}

/* buffered_bounded_lemire_uint32: uniform on [0, rng], rng < 2**32 - 1. */
static inline uint32_t nh_rng_lemire32(nh_rng *rng, uint32_t range) {
    const uint32_t range_excl = range + 1;
    uint64_t m = (uint64_t)nh_rng_next_uint32(rng) * range_excl;
    uint32_t leftover = (uint32_t)(m & 0xFFFFFFFFu);
    if (leftover < range_excl) {
        const uint32_t threshold = (UINT32_MAX - range) % range_excl;
        while (leftover < threshold) {
            m = (uint64_t)nh_rng_next_uint32(rng) * range_excl;
            leftover = (uint32_t)(m & 0xFFFFFFFFu);
        }
    }
    return (uint32_t)(m >> 32);
}

/* bounded_lemire_uint64: uniform on [0, rng], rng < 2**64 - 1. */
static inline uint64_t nh_rng_lemire64(nh_rng *rng, uint64_t range) {
    const uint64_t range_excl = range + 1;
    nh_u128 m = (nh_u128)nh_rng_next_uint64(rng) * range_excl;
    uint64_t leftover = (uint64_t)m;
    if (leftover < range_excl) {
        const uint64_t threshold = (UINT64_MAX - range) % range_excl;
        while (leftover < threshold) {
            m = (nh_u128)nh_rng_next_uint64(rng) * range_excl;
            leftover = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* random_bounded_uint64 with use_masked = false: uniform on [0, range]. */
static inline uint64_t nh_rng_bounded(nh_rng *rng, uint64_t range) {
    if (range == 0) {
        return 0;
    }
    if (range <= UINT64_C(0xFFFFFFFF)) {
        if (range == UINT64_C(0xFFFFFFFF)) {
            return nh_rng_next_uint32(rng);
        }
        return nh_rng_lemire32(rng, (uint32_t)range);
    }
    if (range == UINT64_MAX) {
        return nh_rng_next_uint64(rng);
    }
    return nh_rng_lemire64(rng, range);
}

/* Generator.integers(low, high_inclusive + 1) for int64 (the spec's U[a, b] is (a, b)); low <= high. */
static inline int64_t nh_rng_uniform(nh_rng *rng, int64_t low, int64_t high_inclusive) {
    uint64_t range = (uint64_t)high_inclusive - (uint64_t)low;
    return (int64_t)((uint64_t)low + nh_rng_bounded(rng, range));
}

/* Generator.integers(low, high), high exclusive, low < high: the call the Python engine writes. */
static inline int64_t nh_rng_integers(nh_rng *rng, int64_t low, int64_t high) {
    return nh_rng_uniform(rng, low, high - 1);
}

/* A chance `rng.random() < p` (§16.6). */
static inline int nh_rng_chance(nh_rng *rng, double p) { return nh_rng_random(rng) < p; }

#endif /* NH_RNG_H */
