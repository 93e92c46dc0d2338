/* Run a WAVE kernel from C: examples/axpy.wave, out[i] = a * x[i] + y[i] on 1000 floats.
 *
 *   cargo build --release
 *   gcc -I include examples/c/axpy.c -L target/release -lwave_jit -Wl,-rpath,target/release -o axpy
 *   ./axpy examples/axpy.wave
 *
 * (tests/c_api.rs compiles and runs it.) Arrays passed as WAVE_ARG_HOST are copied into device
 * memory for the launch and, with copy_back, out again; wave_buffer_alloc gives buffers that
 * stay in device memory between launches instead. */
#include <stdio.h>
#include <wave_jit.h>

static int fail(const char *what) {
    size_t len;
    const uint8_t *message = wave_last_error(&len);
    fprintf(stderr, "%s: %.*s\n", what, (int)len, (const char *)message);
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "examples/axpy.wave";
    enum { N = 1000 };
    float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 0.5f * (float)i;
    }

    WaveDevice *device;
    WaveModule *module;
    WaveKernel *axpy;
    if (wave_device_new(0, 0, WAVE_ENGINE_JIT, &device)) return fail("device");
    if (wave_module_load_file(path, &module)) return fail(path);
    if (wave_module_kernel(module, "axpy", &axpy)) return fail("kernel");

    WaveArg args[] = {
        {WAVE_ARG_HOST, {.host = {x, sizeof x, 0, 0}}},
        {WAVE_ARG_HOST, {.host = {y, sizeof y, 0, 0}}},
        {WAVE_ARG_HOST, {.host = {out, sizeof out, 0, 1}}}, /* copied back */
        {WAVE_ARG_U32, {.uint32 = N}},
        {WAVE_ARG_F32, {.float32 = 2.0f}},
    };
    const uint32_t grid[3] = {(N + 255) / 256, 1, 1}, workgroup[3] = {256, 1, 1};
    if (wave_launch(device, axpy, &grid, &workgroup, args, 5, NULL)) return fail("launch");

    printf("out[0..4] = %g %g %g %g, out[999] = %g\n", out[0], out[1], out[2], out[3], out[999]);
    wave_kernel_free(axpy);
    wave_module_free(module);
    wave_device_free(device);
    return out[999] == 2.0f * 999 + 0.5f * 999 ? 0 : 1;
}
