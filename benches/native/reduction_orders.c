/* The sum reduction's input read in the orders a CPU can run `benches/kernels/reduction.wave`
 * (16M u32, a grid of 64 workgroups of 256 threads, each thread striding by the grid's
 * 16,384 threads), by native code on two threads: how fast each order can be, whatever runs
 * it (README, Performance, seventh stop).
 *
 *   gcc -O3 -march=native -fopenmp benches/native/reduction_orders.c -o /tmp/reduction_orders
 *   /tmp/reduction_orders
 *
 * Orders, GB/s of the best of 20 runs:
 *   per-wave            each 32-lane wave walks all its trips, then the next wave (the JIT's
 *                       order: the interpreter runs a workgroup's waves one after another)
 *   per-wave, prefetch  the same, each wave prefetching its own lines `d` trips ahead
 *   workgroup           all 256 lanes of a workgroup take each trip together
 *   workgroup, prefetch the same, prefetching the workgroup's 1 KiB `d` trips ahead
 *   streaming           contiguous chunks (the bench's native yardstick)
 */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N (16u << 20)
#define WORKGROUPS 64
#define THREADS 256
#define WAVE 32
#define STRIDE (WORKGROUPS * THREADS)

static __m256i load8(const uint32_t *p) { return _mm256_load_si256((const __m256i *)p); }

static uint32_t lanes_sum(__m256i v) {
    uint32_t t[8], s = 0;
    _mm256_storeu_si256((__m256i *)t, v);
    for (int i = 0; i < 8; i++) s += t[i];
    return s;
}

/* Each wave in turn; `ahead` > 0: prefetch its own 128 bytes that many trips ahead. */
static uint32_t per_wave(const uint32_t *in, unsigned ahead) {
    uint32_t total = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : total) num_threads(2)
    for (int g = 0; g < WORKGROUPS; g++)
        for (int w = 0; w < THREADS / WAVE; w++) {
            __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
            for (unsigned base = 0; base < N; base += STRIDE) {
                const uint32_t *p = in + base + g * THREADS + w * WAVE;
                if (ahead) {
                    _mm_prefetch((const char *)(p + ahead * STRIDE), _MM_HINT_T0);
                    _mm_prefetch((const char *)(p + ahead * STRIDE + 16), _MM_HINT_T0);
                }
                a0 = _mm256_add_epi32(a0, load8(p));
                a1 = _mm256_add_epi32(a1, load8(p + 8));
                a2 = _mm256_add_epi32(a2, load8(p + 16));
                a3 = _mm256_add_epi32(a3, load8(p + 24));
            }
            total += lanes_sum(a0) + lanes_sum(a1) + lanes_sum(a2) + lanes_sum(a3);
        }
    return total;
}

/* A workgroup's lanes trip by trip; `ahead` > 0: prefetch its 1 KiB that many trips ahead. */
static uint32_t per_workgroup(const uint32_t *in, unsigned ahead) {
    uint32_t total = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : total) num_threads(2)
    for (int g = 0; g < WORKGROUPS; g++) {
        __m256i acc[THREADS / 8];
        for (int j = 0; j < THREADS / 8; j++) acc[j] = _mm256_setzero_si256();
        for (unsigned base = 0; base < N; base += STRIDE) {
            const uint32_t *p = in + base + g * THREADS;
            if (ahead)
                for (int j = 0; j < THREADS; j += 16)
                    _mm_prefetch((const char *)(p + ahead * STRIDE + j), _MM_HINT_T0);
            for (int j = 0; j < THREADS / 8; j++) acc[j] = _mm256_add_epi32(acc[j], load8(p + 8 * j));
        }
        for (int j = 0; j < THREADS / 8; j++) total += lanes_sum(acc[j]);
    }
    return total;
}

static uint32_t streaming(const uint32_t *in, unsigned unused) {
    (void)unused;
    uint32_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(2)
    for (unsigned c = 0; c < N; c += STRIDE) {
        __m256i a = _mm256_setzero_si256();
        for (unsigned i = c; i < c + STRIDE; i += 8) a = _mm256_add_epi32(a, load8(in + i));
        total += lanes_sum(a);
    }
    return total;
}

int main(void) {
    uint32_t *in = aligned_alloc(4096, N * 4ull);
    uint32_t want = 0;
    for (unsigned i = 0; i < N; i++) want += in[i] = i * 2654435761u;
    struct { const char *name; uint32_t (*run)(const uint32_t *, unsigned); unsigned ahead; } orders[] = {
        {"per-wave", per_wave, 0},           {"per-wave, prefetch 8 ahead", per_wave, 8},
        {"workgroup", per_workgroup, 0},     {"workgroup, prefetch 2 ahead", per_workgroup, 2},
        {"workgroup, prefetch 4 ahead", per_workgroup, 4}, {"streaming", streaming, 0},
    };
    for (unsigned o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        double best = 1e9;
        for (int rep = 0; rep < 20; rep++) {
            double t0 = omp_get_wtime();
            uint32_t got = orders[o].run(in, orders[o].ahead);
            double t = omp_get_wtime() - t0;
            if (got != want) {
                fprintf(stderr, "%s: wrong sum\n", orders[o].name);
                return 1;
            }
            if (t < best) best = t;
        }
        printf("%-28s %5.1f GB/s\n", orders[o].name, N * 4.0 / best / 1e9);
    }
    return 0;
}
