// wave-ptx-runner: load a PTX module with the CUDA driver API, run one kernel
// once on device 0, and write device memory afterwards to a file; for checking
// the PTX the PTX writer emits on a real NVIDIA GPU (.ci/ptx-device-check).
//
// Build (on a machine with the CUDA toolkit and driver):
//   nvcc -O2 -o ptx-runner .ci/ptx-runner/runner.cpp -lcuda
//
// Kernel convention (gpu-backends/src/ptx.rs):
//   .visible .entry NAME(.param .u64 wave_device_mem, .param .u64 wave_init_regs)
// with static .shared only (no dynamic shared memory).
//
// usage: ptx-runner --ptx FILE --kernel NAME --grid X,Y,Z --block X,Y,Z
//                   --mem-size N [--mem-in FILE] [--regs FILE] --out FILE
//   --grid     blocks per grid, --block threads per block (X fastest)
//   --mem-in   initial device memory (at most N bytes; the rest is zero)
//   --regs     the 256 u32 initial registers, little-endian (at most 1024 bytes)
//   --out      the N bytes of device memory after the run
// exit codes: 0 ok, 1 CUDA error (call and error printed), 64 usage or I/O error

#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string &msg) {
  std::fprintf(stderr, "ptx-runner: %s\n", msg.c_str());
  std::exit(64);
}

void check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = "?";
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = "?";
  std::fprintf(stderr, "ptx-runner: %s failed: %s (%d): %s\n", call, name,
               static_cast<int>(r), text);
  std::exit(1);
}

std::vector<char> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    usage("cannot read " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

unsigned parse_uint(const std::string &s) {
  char *end = nullptr;
  unsigned long v = std::strtoul(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v == 0 || v > 0xFFFFFFFFul)
    usage("bad number '" + s + "'");
  return static_cast<unsigned>(v);
}

void parse_xyz(const std::string &s, unsigned out[3]) {
  size_t a = s.find(','), b = a == std::string::npos ? a : s.find(',', a + 1);
  if (b == std::string::npos || s.find(',', b + 1) != std::string::npos)
    usage("expected X,Y,Z, got '" + s + "'");
  out[0] = parse_uint(s.substr(0, a));
  out[1] = parse_uint(s.substr(a + 1, b - a - 1));
  out[2] = parse_uint(s.substr(b + 1));
}

} // namespace

int main(int argc, char **argv) {
  std::string ptx_path, kernel, mem_in, regs_path, out_path;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, mem_size = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc)
      usage(a + " needs a value (or is unknown)");
    std::string v = argv[++i];
    if (a == "--ptx") ptx_path = v;
    else if (a == "--kernel") kernel = v;
    else if (a == "--grid") parse_xyz(v, grid);
    else if (a == "--block") parse_xyz(v, block);
    else if (a == "--mem-size") mem_size = parse_uint(v);
    else if (a == "--mem-in") mem_in = v;
    else if (a == "--regs") regs_path = v;
    else if (a == "--out") out_path = v;
    else usage("unknown argument " + a);
  }
  if (ptx_path.empty() || kernel.empty() || !grid[0] || !block[0] ||
      !mem_size || out_path.empty())
    usage("--ptx, --kernel, --grid, --block, --mem-size and --out are required");

  std::vector<char> ptx = read_file(ptx_path);
  ptx.push_back('\0');
  std::vector<char> mem(mem_size, 0);
  if (!mem_in.empty()) {
    std::vector<char> in = read_file(mem_in);
    if (in.size() > mem.size())
      usage("--mem-in is larger than --mem-size");
    std::memcpy(mem.data(), in.data(), in.size());
  }
  std::vector<char> regs(256 * 4, 0);
  if (!regs_path.empty()) {
    std::vector<char> in = read_file(regs_path);
    if (in.size() > regs.size())
      usage("--regs is larger than 256 u32");
    std::memcpy(regs.data(), in.data(), in.size());
  }

  check(cuInit(0), "cuInit");
  CUdevice dev;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  // The primary context (cuCtxCreate's signature changed in CUDA 13). Where the
  // GPU is in exclusive-process mode another runner may hold it: wait a while.
  CUcontext ctx;
  CUresult r = cuDevicePrimaryCtxRetain(&ctx, dev);
  for (int tries = 0; r == CUDA_ERROR_DEVICE_UNAVAILABLE && tries < 400; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    r = cuDevicePrimaryCtxRetain(&ctx, dev);
  }
  check(r, "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");

  char log[16384] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof log))};
  CUmodule mod;
  r = cuModuleLoadDataEx(&mod, ptx.data(), 2, opts, vals);
  if (r != CUDA_SUCCESS)
    std::fprintf(stderr, "ptx-runner: PTX JIT log for %s:\n%s\n", ptx_path.c_str(), log);
  check(r, "cuModuleLoadDataEx");
  CUfunction fn;
  check(cuModuleGetFunction(&fn, mod, kernel.c_str()), "cuModuleGetFunction");

  CUdeviceptr dmem, dregs;
  check(cuMemAlloc(&dmem, mem.size()), "cuMemAlloc(device memory)");
  check(cuMemAlloc(&dregs, regs.size()), "cuMemAlloc(registers)");
  check(cuMemcpyHtoD(dmem, mem.data(), mem.size()), "cuMemcpyHtoD(device memory)");
  check(cuMemcpyHtoD(dregs, regs.data(), regs.size()), "cuMemcpyHtoD(registers)");
  void *params[] = {&dmem, &dregs};
  check(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                       nullptr, params, nullptr),
        "cuLaunchKernel");
  check(cuCtxSynchronize(), "cuCtxSynchronize (the kernel's run)");
  check(cuMemcpyDtoH(mem.data(), dmem, mem.size()), "cuMemcpyDtoH");
  check(cuMemFree(dmem), "cuMemFree");
  check(cuMemFree(dregs), "cuMemFree");
  check(cuModuleUnload(mod), "cuModuleUnload");
  check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");

  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out.write(mem.data(), static_cast<std::streamsize>(mem.size()));
  if (!out.flush())
    usage("cannot write " + out_path);
  return 0;
}
