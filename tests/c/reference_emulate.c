/* A program written against the reference WAVE runtime's C ABI, not against wave_jit.h: it
 * declares the reference's two entry points itself and lays out device memory as the
 * reference runtime does (buffers one after another from address 0, register i = buffer i's
 * offset, scalars in the next registers). Linked to libwave_jit.so by tests/c_api.rs and run
 * as `reference_emulate AXPY.wbin`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int32_t wave_emulate(const uint8_t *wbin, size_t wbin_len, uint8_t *mem, size_t mem_len,
                     const uint32_t (*regs)[2], size_t reg_count, const uint32_t (*grid)[3],
                     const uint32_t (*workgroup)[3]);
const uint8_t *wave_last_error(size_t *len);

static int checks = 0;

static void check(int ok, const char *what, int line) {
    checks++;
    if (!ok) {
        size_t len = 0;
        const uint8_t *message = wave_last_error(&len);
        fprintf(stderr, "reference_emulate.c:%d: %s (last error: %.*s)\n", line, what, (int)len,
                (const char *)message);
        exit(1);
    }
}
#define CHECK(c) check((c), #c, __LINE__)

static int last_error_mentions(const char *text) {
    size_t len = 0;
    const uint8_t *message = wave_last_error(&len);
    char copy[4096];
    if (len >= sizeof copy) len = sizeof copy - 1;
    memcpy(copy, message, len);
    copy[len] = '\0';
    return strstr(copy, text) != NULL;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    FILE *file = fopen(argv[1], "rb");
    if (!file) return 2;
    static uint8_t wbin[1 << 16];
    size_t wbin_len = fread(wbin, 1, sizeof wbin, file);
    fclose(file);

    /* x, y, out: 500 floats each, one after another from address 0. */
    enum { N = 500 };
    size_t mem_len = 1 << 20;
    uint8_t *mem = calloc(mem_len, 1);
    float *x = (float *)mem, *y = x + N, *out = y + N;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 10.0f;
        out[i] = -1.0f;
    }
    const uint32_t regs[5][2] = {
        {0, 0}, {1, 4 * N}, {2, 8 * N}, {3, N}, {4, f32_bits(0.25f)},
    };
    const uint32_t grid[3] = {2, 1, 1}, workgroup[3] = {256, 1, 1};
    CHECK(wave_emulate(wbin, wbin_len, mem, mem_len, regs, 5, &grid, &workgroup) == 0);
    for (int i = 0; i < N; i++) CHECK(out[i] == 0.25f * (float)i + 10.0f);
    CHECK(x[N - 1] == (float)(N - 1));

    /* Less than 1 MiB of caller memory: device memory is still 1 MiB. */
    uint8_t small[12 * N];
    memcpy(small, mem, sizeof small);
    memset(small + 8 * N, 0, 4 * N);
    CHECK(wave_emulate(wbin, wbin_len, small, sizeof small, regs, 5, &grid, &workgroup) == 0);
    CHECK(memcmp(small + 8 * N, mem + 8 * N, 4 * N) == 0);

    /* Device memory past the caller's bytes starts zero-filled on every call, even where an
     * earlier call's kernel wrote: out = 1 * x + y with x read past the caller's 8N bytes. */
    uint8_t xy[8 * N];
    memcpy(xy, mem, sizeof xy);
    const uint32_t write_past[5][2] = {{0, 0}, {1, 4 * N}, {2, 8 * N}, {3, N}, {4, f32_bits(1.0f)}};
    CHECK(wave_emulate(wbin, wbin_len, xy, sizeof xy, write_past, 5, &grid, &workgroup) == 0);
    const uint32_t read_past[5][2] = {{0, 8 * N}, {1, 4 * N}, {2, 0}, {3, N}, {4, f32_bits(1.0f)}};
    CHECK(wave_emulate(wbin, wbin_len, xy, sizeof xy, read_past, 5, &grid, &workgroup) == 0);
    for (int i = 0; i < N; i++) CHECK(((float *)xy)[i] == 10.0f);

    /* A run that fails (n = 2^20 reads past device memory): 5, memory unchanged. */
    uint8_t *before = malloc(mem_len);
    memcpy(before, mem, mem_len);
    const uint32_t past_end[5][2] = {{0, 0}, {1, 4 * N}, {2, 8 * N}, {3, 1 << 20}, {4, 0}};
    const uint32_t big_grid[3] = {4096, 1, 1};
    CHECK(wave_emulate(wbin, wbin_len, mem, mem_len, past_end, 5, &big_grid, &workgroup) == 5);
    CHECK(last_error_mentions("out of bounds"));
    CHECK(memcmp(before, mem, mem_len) == 0);

    /* A binary that does not load: 3. */
    CHECK(wave_emulate(wbin, 64, mem, mem_len, regs, 5, &grid, &workgroup) == 3);
    CHECK(last_error_mentions("beyond the end of the 64-byte file"));
    CHECK(wave_emulate(wbin, 10, mem, mem_len, regs, 5, &grid, &workgroup) == 3);
    CHECK(last_error_mentions("shorter than the 32-byte header"));

    /* Device memory that cannot be written: 4. A register that does not exist: 5. */
    CHECK(wave_emulate(wbin, wbin_len, NULL, 64, regs, 5, &grid, &workgroup) == 4);
    const uint32_t bad_reg[1][2] = {{300, 1}};
    CHECK(wave_emulate(wbin, wbin_len, mem, mem_len, bad_reg, 1, &grid, &workgroup) == 5);
    CHECK(last_error_mentions("register 300"));
    const uint32_t empty_grid[3] = {0, 1, 1};
    CHECK(wave_emulate(wbin, wbin_len, mem, mem_len, regs, 5, &empty_grid, &workgroup) == 5);
    CHECK(memcmp(before, mem, mem_len) == 0);

    free(before);
    free(mem);
    printf("reference_emulate: %d checks passed\n", checks);
    return 0;
}
