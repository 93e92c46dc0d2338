/* No Rust panic crosses the C ABI. tests/c_api.rs runs this with WAVE_JIT_TEST_PANIC=*, which
 * makes every entry point but wave_last_error panic inside its guard: each must return its
 * failure value (WAVE_ERROR_INTERNAL, wave_emulate's 5, 0 or NULL) with a message naming it,
 * and the process must live on. tests/c_api.rs also checks that every function the header
 * declares is called here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wave_jit.h>

static int checks = 0;

static void expect(int ok, const char *entry) {
    size_t len = 0;
    const char *message = (const char *)wave_last_error(&len);
    char wanted[128];
    snprintf(wanted, sizeof wanted, "internal error in %s ", entry);
    checks++;
    if (!ok || strstr(message, wanted) == NULL || strstr(message, "injected panic") == NULL) {
        fprintf(stderr, "%s: wrong result or message: %.*s\n", entry, (int)len, message);
        exit(1);
    }
}

int main(void) {
    const uint32_t dims[3] = {1, 1, 1};
    uint8_t byte = 0;
    size_t len = 7;
    WaveDevice *device = (WaveDevice *)&byte; /* never dereferenced: each call panics first */
    WaveModule *module = (WaveModule *)&byte;
    WaveKernel *kernel = (WaveKernel *)&byte;
    WaveBuffer *buffer = (WaveBuffer *)&byte;

    expect(wave_emulate(&byte, 1, &byte, 1, NULL, 0, &dims, &dims) == 5, "wave_emulate");
    expect(wave_device_new(0, 0, 0, &device) == WAVE_ERROR_INTERNAL, "wave_device_new");
    wave_device_free(device);
    expect(1, "wave_device_free");
    expect(wave_device_memory_size(device) == 0, "wave_device_memory_size");
    expect(wave_device_write(device, 0, &byte, 1) == WAVE_ERROR_INTERNAL, "wave_device_write");
    expect(wave_device_read(device, 0, &byte, 1) == WAVE_ERROR_INTERNAL, "wave_device_read");
    expect(wave_module_load(&byte, 1, NULL, &module) == WAVE_ERROR_INTERNAL, "wave_module_load");
    expect(wave_module_load_file("x", &module) == WAVE_ERROR_INTERNAL, "wave_module_load_file");
    wave_module_free(module);
    expect(1, "wave_module_free");
    expect(wave_module_kernel_count(module) == 0, "wave_module_kernel_count");
    expect(wave_module_kernel(module, "k", &kernel) == WAVE_ERROR_INTERNAL, "wave_module_kernel");
    expect(wave_module_kernel_at(module, 0, &kernel) == WAVE_ERROR_INTERNAL, "wave_module_kernel_at");
    wave_kernel_free(kernel);
    expect(1, "wave_kernel_free");
    expect(wave_kernel_name(kernel, &len) == NULL && len == 0, "wave_kernel_name");
    expect(wave_kernel_registers(kernel) == 0, "wave_kernel_registers");
    expect(wave_buffer_alloc(device, 4, 0, &buffer) == WAVE_ERROR_INTERNAL, "wave_buffer_alloc");
    wave_buffer_free(buffer);
    expect(1, "wave_buffer_free");
    expect(wave_buffer_address(buffer) == 0, "wave_buffer_address");
    expect(wave_buffer_size(buffer) == 0, "wave_buffer_size");
    expect(wave_buffer_write(buffer, 0, &byte, 1) == WAVE_ERROR_INTERNAL, "wave_buffer_write");
    expect(wave_buffer_read(buffer, 0, &byte, 1) == WAVE_ERROR_INTERNAL, "wave_buffer_read");
    expect(wave_launch(device, kernel, &dims, &dims, NULL, 0, NULL) == WAVE_ERROR_INTERNAL,
           "wave_launch");
    uint8_t *wbin = &byte;
    size_t wbin_len = 0;
    expect(wave_assemble(&byte, 1, NULL, &wbin, &wbin_len) == WAVE_ERROR_INTERNAL, "wave_assemble");
    wave_free(&byte, 1);
    expect(1, "wave_free");
    printf("panic_barrier: %d entry points returned their failure value\n", checks);
    return 0;
}
