// wave-sycl-runner: compile a SYCL free-function kernel from source at run
// time (sycl_ext_oneapi_kernel_compiler) and run it once on the SYCL CPU
// device (Intel OpenCL CPU runtime), for checking generated SYCL C++ in CI.
//
// Built by .ci/gpu-toolchains.sh:
//   g++ -std=c++17 -O1 -I$PREFIX/include runner.cpp -L$PREFIX/lib -lsycl
//       -Wl,-rpath,$PREFIX/lib -o wave-sycl-runner
//
// Kernel convention (what the SYCL writer emits):
//   #include <sycl/sycl.hpp>
//   namespace syclexp = sycl::ext::oneapi::experimental;
//   extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<3>))
//   SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<16>))  // optional
//   void wave_kernel(uint8_t* device_mem, const uint32_t* init_regs) {
//     auto it = syclexp::this_work_item::get_nd_item<3>(); ...
//   }
//
// Dimension mapping: --global/--local take X,Y,Z with X the fastest-varying
// dimension (CUDA/HIP-like). They are passed to SYCL as range<3>(Z, Y, X), so
// inside the kernel X is dimension 2: it.get_global_id(2) / get_local_id(2),
// and sub-groups are formed from consecutive X.
//
// Run `wave-sycl-runner --help` for the command line.

#include <sycl/sycl.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace syclexp = sycl::ext::oneapi::experimental;

namespace {

constexpr int kExitUsage = 64;   // bad command line / unreadable input file
constexpr int kExitBuild = 2;    // kernel source failed to compile / no kernel
constexpr int kExitRun = 3;      // launch or execution failed
constexpr int kExitCheck = 4;    // sub-group size mismatch / unsupported
constexpr size_t kNumRegs = 256; // init_regs: 256 x u32

const char *kUsage = R"(usage: wave-sycl-runner [options]   (or @ARGFILE: whitespace-separated args)

  --source FILE       SYCL C++ source with a free-function nd_range_kernel<3>
  --kernel NAME       kernel name (extern "C" name, default: wave_kernel)
  --global X,Y,Z      global size in work-items (X fastest; = SYCL dim 2)
  --local X,Y,Z       work-group size in work-items
  --sg N              expected sub-group size (0 = don't check; default 0).
                      Must be in the device's sub_group_sizes and equal to the
                      kernel's compiled sub-group size (sub_group_size<N>).
                      Also passed to the compiler as -DWAVE_SUB_GROUP_SIZE=N.
  --mem-size BYTES    size of the device memory buffer (arg 0, uint8_t*)
  --mem-in FILE       initial device memory contents (<= BYTES; rest zeroed)
  --out FILE          write the whole device memory here after the run
  --regs FILE         raw bytes of the 256 u32 init registers (arg 1,
                      const uint32_t*; <= 1024 bytes, rest zeroed; LE)
  --build-opt OPT     extra option for the run-time compiler (repeatable)
  --time              print compile / run times to stderr
  --info              print the CPU device's properties and exit
  --help              this text

exit codes: 0 ok, 2 compile error (log on stderr), 3 run error,
            4 sub-group size mismatch/unsupported, 64 usage/IO error
)";

[[noreturn]] void die(int code, const std::string &msg) {
  std::cerr << "wave-sycl-runner: " << msg << "\n";
  std::exit(code);
}

bool read_file(const std::string &path, std::string &out) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

uint64_t parse_u64(const std::string &s, const char *what) {
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || errno != 0 || *end != '\0' || s[0] == '-')
    die(kExitUsage, std::string("bad number for ") + what + ": '" + s + "'");
  return v;
}

void parse_xyz(const std::string &s, const char *what, size_t out[3]) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == ',' || c == 'x') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  if (parts.empty() || parts.size() > 3)
    die(kExitUsage, std::string("expected X,Y,Z for ") + what + ": '" + s + "'");
  for (int i = 0; i < 3; ++i)
    out[i] = i < (int)parts.size() ? parse_u64(parts[i], what) : 1;
  for (int i = 0; i < 3; ++i)
    if (out[i] == 0)
      die(kExitUsage, std::string(what) + " must be non-zero in every dimension");
}

// Expand @FILE arguments (whitespace-separated tokens, '#' to end of line is
// a comment).
void expand_args(int argc, char **argv, std::vector<std::string> &args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 1 && a[0] == '@') {
      std::string text;
      if (!read_file(a.substr(1), text))
        die(kExitUsage, "cannot read argument file " + a.substr(1));
      std::istringstream lines(text);
      std::string line;
      while (std::getline(lines, line)) {
        auto hash = line.find('#');
        if (hash != std::string::npos)
          line.resize(hash);
        std::istringstream toks(line);
        std::string t;
        while (toks >> t)
          args.push_back(t);
      }
    } else {
      args.push_back(a);
    }
  }
}

void print_info(sycl::device dev) {
  auto p = dev.get_platform();
  std::cout << "platform: " << p.get_info<sycl::info::platform::name>() << " ("
            << p.get_info<sycl::info::platform::version>() << ")\n";
  std::cout << "device: " << dev.get_info<sycl::info::device::name>() << "\n";
  std::cout << "driver_version: "
            << dev.get_info<sycl::info::device::driver_version>() << "\n";
  std::cout << "sub_group_sizes:";
  for (auto s : dev.get_info<sycl::info::device::sub_group_sizes>())
    std::cout << " " << s;
  std::cout << "\n";
  std::cout << "max_work_group_size: "
            << dev.get_info<sycl::info::device::max_work_group_size>() << "\n";
  std::cout << "max_num_sub_groups: "
            << dev.get_info<sycl::info::device::max_num_sub_groups>() << "\n";
  std::cout << "local_mem_size: "
            << dev.get_info<sycl::info::device::local_mem_size>() << "\n";
  std::cout << "max_compute_units: "
            << dev.get_info<sycl::info::device::max_compute_units>() << "\n";
  std::cout << "can_compile_sycl: "
            << (dev.ext_oneapi_can_compile(syclexp::source_language::sycl)
                    ? "yes"
                    : "no")
            << "\n";
}

double secs_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args;
  expand_args(argc, argv, args);

  std::string source_path, kernel_name = "wave_kernel", mem_in_path, out_path,
                           regs_path;
  size_t global[3] = {0, 0, 0}, local[3] = {0, 0, 0};
  bool have_global = false, have_local = false, have_mem_size = false;
  uint64_t sg = 0, mem_size = 0;
  std::vector<std::string> build_opts;
  bool timing = false, info = false;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto need = [&](const char *flag) -> const std::string & {
      if (i + 1 >= args.size())
        die(kExitUsage, std::string(flag) + " needs a value");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--source") {
      source_path = need("--source");
    } else if (a == "--kernel") {
      kernel_name = need("--kernel");
    } else if (a == "--global") {
      parse_xyz(need("--global"), "--global", global);
      have_global = true;
    } else if (a == "--local") {
      parse_xyz(need("--local"), "--local", local);
      have_local = true;
    } else if (a == "--sg") {
      sg = parse_u64(need("--sg"), "--sg");
    } else if (a == "--mem-size") {
      mem_size = parse_u64(need("--mem-size"), "--mem-size");
      have_mem_size = true;
    } else if (a == "--mem-in") {
      mem_in_path = need("--mem-in");
    } else if (a == "--out") {
      out_path = need("--out");
    } else if (a == "--regs") {
      regs_path = need("--regs");
    } else if (a == "--build-opt") {
      build_opts.push_back(need("--build-opt"));
    } else if (a == "--time") {
      timing = true;
    } else if (a == "--info") {
      info = true;
    } else {
      die(kExitUsage, "unknown argument '" + a + "' (see --help)");
    }
  }

  // Note: a default-constructed sycl::device already runs the default
  // selector (and throws when there is no device), so select inside the try.
  auto select_cpu = []() -> sycl::device {
    try {
      return sycl::device(sycl::cpu_selector_v);
    } catch (const sycl::exception &e) {
      die(kExitRun, std::string("no SYCL CPU device (check OCL_ICD_FILENAMES / "
                                "LD_LIBRARY_PATH): ") +
                        e.what());
    }
  };
  if (info) {
    print_info(select_cpu());
    return 0;
  }

  if (source_path.empty() || !have_global || !have_local || !have_mem_size ||
      out_path.empty())
    die(kExitUsage, "--source, --global, --local, --mem-size and --out are "
                    "required (see --help)");
  for (int d = 0; d < 3; ++d)
    if (global[d] % local[d] != 0)
      die(kExitUsage, "global size must be a multiple of local size in every "
                      "dimension");

  // Inputs.
  std::string source;
  if (!read_file(source_path, source))
    die(kExitUsage, "cannot read source " + source_path);
  std::vector<uint8_t> mem(mem_size, 0);
  if (!mem_in_path.empty()) {
    std::string bytes;
    if (!read_file(mem_in_path, bytes))
      die(kExitUsage, "cannot read --mem-in " + mem_in_path);
    if (bytes.size() > mem_size)
      die(kExitUsage, "--mem-in is " + std::to_string(bytes.size()) +
                          " bytes, larger than --mem-size " +
                          std::to_string(mem_size));
    std::memcpy(mem.data(), bytes.data(), bytes.size());
  }
  std::vector<uint32_t> regs(kNumRegs, 0);
  if (!regs_path.empty()) {
    std::string bytes;
    if (!read_file(regs_path, bytes))
      die(kExitUsage, "cannot read --regs " + regs_path);
    if (bytes.size() > kNumRegs * 4)
      die(kExitUsage, "--regs is " + std::to_string(bytes.size()) +
                          " bytes, more than 256 u32");
    std::memcpy(regs.data(), bytes.data(), bytes.size());
  }

  sycl::device dev = select_cpu();
  if (sg != 0) {
    bool ok = false;
    for (auto s : dev.get_info<sycl::info::device::sub_group_sizes>())
      ok |= (s == sg);
    if (!ok)
      die(kExitCheck, "sub-group size " + std::to_string(sg) +
                          " not supported by the CPU device (see --info)");
    build_opts.push_back("-DWAVE_SUB_GROUP_SIZE=" + std::to_string(sg));
  }

  std::string pending_async;
  auto async_handler = [&](sycl::exception_list el) {
    for (auto &ep : el) {
      try {
        std::rethrow_exception(ep);
      } catch (const sycl::exception &e) {
        pending_async += std::string(e.what()) + "\n";
      }
    }
  };
  sycl::queue q(dev, async_handler);
  sycl::context ctx = q.get_context();

  if (!dev.ext_oneapi_can_compile(syclexp::source_language::sycl))
    die(kExitBuild, "device cannot compile SYCL source (libsycl-jit missing?)");

  // Compile.
  auto t0 = std::chrono::steady_clock::now();
  std::string log;
  sycl::kernel kernel = [&]() -> sycl::kernel {
    try {
      auto src_kb = syclexp::create_kernel_bundle_from_source(
          ctx, syclexp::source_language::sycl, source);
      auto exe_kb = syclexp::build(
          src_kb, std::vector<sycl::device>{dev},
          syclexp::properties{syclexp::build_options{build_opts},
                              syclexp::save_log{&log}});
      if (!exe_kb.ext_oneapi_has_kernel(kernel_name)) {
        std::cerr << log;
        die(kExitBuild, "kernel '" + kernel_name +
                            "' not found in the compiled source (free-function "
                            "kernels need extern \"C\" and "
                            "SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::"
                            "nd_range_kernel<3>)))");
      }
      return exe_kb.ext_oneapi_get_kernel(kernel_name);
    } catch (const sycl::exception &e) {
      std::cerr << log;
      if (!log.empty() && log.back() != '\n')
        std::cerr << "\n";
      die(kExitBuild, std::string("compile failed: ") + e.what());
    }
  }();
  if (timing)
    std::cerr << "wave-sycl-runner: compile " << secs_since(t0) << " s\n";
  if (!log.empty())
    std::cerr << log << (log.back() == '\n' ? "" : "\n");

  sycl::range<3> g(global[2], global[1], global[0]);
  sycl::range<3> l(local[2], local[1], local[0]);

  uint32_t compiled_sg = 0;
  try {
    compiled_sg = kernel.get_info<
        sycl::info::kernel_device_specific::compile_sub_group_size>(dev);
  } catch (const sycl::exception &) {
  }
  if (sg != 0 && compiled_sg != sg)
    die(kExitCheck,
        "kernel compiled sub-group size is " + std::to_string(compiled_sg) +
            ", expected " + std::to_string(sg) +
            " (add SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<" +
            std::to_string(sg) + ">)))");

  // Run.
  auto t1 = std::chrono::steady_clock::now();
  uint8_t *dmem = nullptr;
  uint32_t *dregs = nullptr;
  try {
    dmem = sycl::malloc_device<uint8_t>(mem_size ? mem_size : 1, q);
    dregs = sycl::malloc_device<uint32_t>(kNumRegs, q);
    if (!dmem || !dregs)
      die(kExitRun, "USM allocation failed");
    if (mem_size)
      q.memcpy(dmem, mem.data(), mem_size);
    q.memcpy(dregs, regs.data(), kNumRegs * sizeof(uint32_t));
    q.wait_and_throw();
    q.submit([&](sycl::handler &h) {
      h.set_args(dmem, static_cast<const uint32_t *>(dregs));
      h.parallel_for(sycl::nd_range<3>(g, l), kernel);
    });
    q.wait_and_throw();
    if (mem_size)
      q.memcpy(mem.data(), dmem, mem_size);
    q.wait_and_throw();
  } catch (const sycl::exception &e) {
    die(kExitRun, std::string("run failed: ") + e.what() + "\n" +
                      pending_async);
  }
  if (!pending_async.empty())
    die(kExitRun, "asynchronous error: " + pending_async);
  sycl::free(dmem, q);
  sycl::free(dregs, q);
  if (timing)
    std::cerr << "wave-sycl-runner: run " << secs_since(t1)
              << " s (compiled sub-group size " << compiled_sg << ")\n";

  std::ofstream of(out_path, std::ios::binary | std::ios::trunc);
  if (!of)
    die(kExitUsage, "cannot write --out " + out_path);
  of.write(reinterpret_cast<const char *>(mem.data()),
           static_cast<std::streamsize>(mem.size()));
  if (!of)
    die(kExitUsage, "write failed: " + out_path);
  return 0;
}
