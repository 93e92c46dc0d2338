/* The C ABI from C: handles, buffers, launches on both engines, status codes and messages.
 * Run by tests/c_api.rs as `api_test AXPY.wave`; prints "api_test: N checks passed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wave_jit.h>

static int checks = 0;

#define CHECK(condition)                                                                       \
    do {                                                                                       \
        checks++;                                                                              \
        if (!(condition)) {                                                                    \
            size_t len_;                                                                       \
            const uint8_t *m_ = wave_last_error(&len_);                                        \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %.*s)\n", __FILE__, __LINE__, \
                    #condition, (int)len_, (const char *)m_);                                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* The last error message contains `text`. */
static int error_mentions(const char *text) {
    size_t len;
    const char *message = (const char *)wave_last_error(&len);
    /* A NUL follows the message (not counted in len). */
    return message[len] == '\0' && strlen(message) == len && strstr(message, text) != NULL;
}

static const char OOB_SOURCE[] = ".kernel oob\n"
                                 "    mov_imm r1, 0xfffffff0\n"
                                 "    device_store_u32 r1, r1\n"
                                 "    halt\n"
                                 ".end\n";

static void axpy_on(uint32_t engine, const char *axpy_path) {
    WaveDevice *device = NULL;
    CHECK(wave_device_new(1 << 20, 2, engine, &device) == WAVE_OK && device != NULL);
    CHECK(wave_device_memory_size(device) == 1 << 20);

    WaveModule *module = NULL;
    CHECK(wave_module_load_file(axpy_path, &module) == WAVE_OK);
    CHECK(wave_module_kernel_count(module) == 1);
    WaveKernel *by_name = NULL, *by_index = NULL;
    CHECK(wave_module_kernel(module, "axpy", &by_name) == WAVE_OK);
    CHECK(wave_module_kernel_at(module, 0, &by_index) == WAVE_OK);
    size_t name_len = 0;
    const uint8_t *name = wave_kernel_name(by_index, &name_len);
    CHECK(name_len == 4 && memcmp(name, "axpy", 4) == 0);
    CHECK(wave_kernel_registers(by_name) == 10);
    wave_kernel_free(by_index);

    enum { N = 300 };
    float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    WaveBuffer *bx, *by, *bout;
    CHECK(wave_buffer_alloc(device, sizeof x, 0, &bx) == WAVE_OK);
    CHECK(wave_buffer_alloc(device, sizeof y, 0, &by) == WAVE_OK);
    CHECK(wave_buffer_alloc(device, sizeof out, 64, &bout) == WAVE_OK);
    /* First fit from 0, 256-byte alignment by default. */
    CHECK(wave_buffer_address(bx) == 0 && wave_buffer_address(by) == 1280);
    CHECK(wave_buffer_address(bout) == 2496 && wave_buffer_size(bout) == sizeof out);
    CHECK(wave_buffer_write(bx, 0, x, sizeof x) == WAVE_OK);
    CHECK(wave_buffer_write(by, 0, y, sizeof y) == WAVE_OK);

    WaveArg args[5] = {
        {WAVE_ARG_BUFFER, {.buffer = bx}}, {WAVE_ARG_BUFFER, {.buffer = by}},
        {WAVE_ARG_BUFFER, {.buffer = bout}}, {WAVE_ARG_U32, {.uint32 = N}},
        {WAVE_ARG_F32, {.float32 = -0.5f}},
    };
    const uint32_t grid[3] = {2, 1, 1}, workgroup[3] = {256, 1, 1};
    WaveLaunchOptions options = {.wave_width = 8, .unchecked = 0, .max_instructions = 0};
    CHECK(wave_launch(device, by_name, &grid, &workgroup, args, 5, &options) == WAVE_OK);
    CHECK(wave_buffer_read(bout, 0, out, sizeof out) == WAVE_OK);
    for (int i = 0; i < N; i++) CHECK(out[i] == fmaf(-0.5f, (float)i, 1.0f));

    /* Partial reads and writes, and ranges past the end. */
    float two[2] = {0};
    CHECK(wave_buffer_read(bout, 4 * 10, two, sizeof two) == WAVE_OK && two[1] == -4.5f);
    CHECK(wave_buffer_read(bout, sizeof out - 4, two, 8) == WAVE_ERROR_READ);
    CHECK(error_mentions("outside the 1200-byte buffer"));
    CHECK(wave_buffer_write(bout, sizeof out, two, 1) == WAVE_ERROR_WRITE);
    CHECK(wave_device_read(device, (1 << 20) - 4, two, 8) == WAVE_ERROR_READ);
    const float answer = 42.0f;
    CHECK(wave_device_write(device, 2496 + 4, &answer, 4) == WAVE_OK);
    CHECK(wave_buffer_read(bout, 4, two, 4) == WAVE_OK && two[0] == 42.0f);

    /* Host arrays: copied in, and back only where asked. */
    float host_out[N];
    memset(host_out, 0xff, sizeof host_out);
    WaveArg host_args[5] = {
        {WAVE_ARG_HOST, {.host = {x, sizeof x, 0, 0}}},
        {WAVE_ARG_HOST, {.host = {y, sizeof y, 16, 0}}},
        {WAVE_ARG_HOST, {.host = {host_out, sizeof host_out, 0, 1}}},
        {WAVE_ARG_U32, {.uint32 = N}},
        {WAVE_ARG_F32, {.float32 = 3.0f}},
    };
    CHECK(wave_launch(device, by_name, &grid, &workgroup, host_args, 5, NULL) == WAVE_OK);
    for (int i = 0; i < N; i++) CHECK(host_out[i] == fmaf(3.0f, (float)i, 1.0f));

    /* Errors: too many arguments, unknown kind, NULLs, a freed-device's buffer still works. */
    WaveArg many[11];
    for (int i = 0; i < 11; i++) many[i] = (WaveArg){WAVE_ARG_I32, {.int32 = -1}};
    CHECK(wave_launch(device, by_name, &grid, &workgroup, many, 11, NULL) == WAVE_ERROR_ARGUMENT);
    CHECK(error_mentions("11 arguments, but its threads have only 10 registers"));
    WaveArg bad = {99, {.uint32 = 0}};
    CHECK(wave_launch(device, by_name, &grid, &workgroup, &bad, 1, NULL) == WAVE_ERROR_ARGUMENT);
    CHECK(error_mentions("args[0].kind is 99"));
    CHECK(wave_launch(NULL, by_name, &grid, &workgroup, args, 5, NULL) == WAVE_ERROR_ARGUMENT);
    CHECK(error_mentions("`device` is NULL"));
    const uint32_t no_groups[3] = {0, 1, 1};
    CHECK(wave_launch(device, by_name, &no_groups, &workgroup, args, 5, NULL) == WAVE_ERROR_RUN);
    CHECK(error_mentions("has no workgroups"));

    wave_buffer_free(bx);
    CHECK(wave_launch(device, by_name, &grid, &workgroup, args, 5, NULL) == WAVE_ERROR_ARGUMENT);
    CHECK(error_mentions("was freed or belongs to another device"));
    wave_device_free(device);
    CHECK(wave_buffer_read(bout, 0, out, 4) == WAVE_OK && out[0] == 1.0f);
    wave_buffer_free(by);
    wave_buffer_free(bout);
    wave_kernel_free(by_name);
    wave_module_free(module);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: api_test AXPY.wave\n");
        return 2;
    }
    size_t len = 99;
    wave_last_error(&len);
    CHECK(len == 0);

    axpy_on(WAVE_ENGINE_JIT, argv[1]);
    axpy_on(WAVE_ENGINE_INTERPRETER, argv[1]);

    WaveDevice *device = NULL;
    CHECK(wave_device_new(0, 0, 7, &device) == WAVE_ERROR_ARGUMENT && device == NULL);
    CHECK(error_mentions("engine 7"));
    CHECK(wave_device_new((uint64_t)1 << 33, 0, WAVE_ENGINE_JIT, &device) == WAVE_ERROR_ARGUMENT);
    CHECK(wave_device_new(4096, 1, WAVE_ENGINE_JIT, &device) == WAVE_OK);
    WaveBuffer *buffer = NULL;
    CHECK(wave_buffer_alloc(device, 8192, 0, &buffer) == WAVE_ERROR_OUT_OF_MEMORY && buffer == NULL);
    CHECK(error_mentions("out of device memory"));
    CHECK(wave_buffer_alloc(device, 16, 3, &buffer) == WAVE_ERROR_ARGUMENT);

    /* Load errors name the file and line; unknown kernels list the ones there are. */
    WaveModule *module = NULL;
    const char bad_source[] = ".kernel k\n    hlt\n.end\n";
    CHECK(wave_module_load((const uint8_t *)bad_source, strlen(bad_source), "bad.wave", &module) ==
          WAVE_ERROR_LOAD);
    CHECK(module == NULL && error_mentions("bad.wave:2:"));
    CHECK(wave_module_load_file("/nonexistent/k.wbin", &module) == WAVE_ERROR_LOAD);
    CHECK(wave_module_load((const uint8_t *)OOB_SOURCE, strlen(OOB_SOURCE), NULL, &module) == WAVE_OK);
    WaveKernel *kernel = NULL;
    CHECK(wave_module_kernel(module, "nope", &kernel) == WAVE_ERROR_NOT_FOUND);
    CHECK(error_mentions("available kernels (name or index): 0: oob"));
    CHECK(wave_module_kernel_at(module, 1, &kernel) == WAVE_ERROR_NOT_FOUND);

    /* Assembling to .wbin bytes, loading them. */
    uint8_t *wbin = NULL;
    size_t wbin_len = 0;
    CHECK(wave_assemble((const uint8_t *)OOB_SOURCE, strlen(OOB_SOURCE), "oob.wave", &wbin, &wbin_len) ==
          WAVE_OK);
    CHECK(wbin_len > 32 && memcmp(wbin, "WAVE", 4) == 0);
    WaveModule *from_wbin = NULL;
    CHECK(wave_module_load(wbin, wbin_len, NULL, &from_wbin) == WAVE_OK);
    CHECK(wave_module_kernel_count(from_wbin) == 1);
    wave_module_free(from_wbin);
    wave_free(wbin, wbin_len);
    CHECK(wave_assemble((const uint8_t *)bad_source, strlen(bad_source), "bad.wave", &wbin, &wbin_len) ==
          WAVE_ERROR_LOAD);
    CHECK(wbin == NULL && error_mentions("bad.wave:2:"));

    /* A failing launch: status 5 and where it failed. */
    CHECK(wave_module_kernel(module, "0", &kernel) == WAVE_OK);
    const uint32_t one[3] = {1, 1, 1};
    CHECK(wave_launch(device, kernel, &one, &one, NULL, 0, NULL) == WAVE_ERROR_RUN);
    CHECK(error_mentions("kernel `oob`, workgroup (0,0,0), wave 0"));
    CHECK(error_mentions("out of bounds: address 0xfffffff0"));
    /* Unchecked: the access stays in the private window and is not reported. */
    WaveLaunchOptions unchecked = {.wave_width = 0, .unchecked = 1, .max_instructions = 0};
    CHECK(wave_launch(device, kernel, &one, &one, NULL, 0, &unchecked) == WAVE_OK);

    wave_kernel_free(kernel);
    wave_module_free(module);
    wave_device_free(device);
    wave_device_free(NULL);
    wave_buffer_free(NULL);
    printf("api_test: %d checks passed\n", checks);
    return 0;
}
