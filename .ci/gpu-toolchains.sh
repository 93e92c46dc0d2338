#!/usr/bin/env bash
# Install and self-test the vendor GPU compilers used to check wave-jit's
# generated PTX, HIP C++ and SYCL C++ (no GPU needed):
#   PTX : ptxas from PyPI nvidia-cuda-nvcc-cu12 (pinned)
#   HIP : Debian 12 clang-15 + ROCm 5.2 headers/device libs (apt)
#   SYCL: Intel SYCL runtime + run-time SYCL compiler + OpenCL CPU device
#         (PyPI intel-sycl-rt / intel-cmplr-lib-ur / intel-opencl-rt 2026.1.2)
#         and .ci/sycl-runner/runner.cpp built against it.
#
# Usage:
#   eval "$(.ci/gpu-toolchains.sh)"        # or: .ci/gpu-toolchains.sh && . "$DIR/env.sh"
#   .ci/gpu-toolchains.sh --no-check       # skip the self-tests (cached runs)
#
# Everything except the apt packages goes to
#   ${WAVE_TOOLCHAIN_DIR:-<repo>/.gpu-toolchains}
# and is reused when present, so a second run only re-runs the self-tests.
# Progress goes to stderr; stdout gets only the `export` lines, which are also
# written to $DIR/env.sh. Needs root (or sudo) for apt-get, network access to
# Debian's mirrors and PyPI. See .ci/gpu-toolchains.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${WAVE_TOOLCHAIN_DIR:-$REPO/.gpu-toolchains}
RUNNER_SRC=$REPO/.ci/sycl-runner/runner.cpp

CHECK=1
for arg in "$@"; do
  case "$arg" in
    --no-check) CHECK=0 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-toolchains: unknown argument '$arg'" >&2; exit 64 ;;
  esac
done

# Pinned versions. 2026.2.0 of the Intel wheels dropped the OpenCL CPU device.
# The last five are the dependencies pip resolves for the first four; they are
# pinned too so that a cold install is reproducible.
PIP_PKGS=(
  intel-sycl-rt==2026.1.2
  intel-cmplr-lib-ur==2026.1.2
  intel-opencl-rt==2026.1.2
  nvidia-cuda-nvcc-cu12==12.9.86
  intel-cmplr-lib-rt==2026.1.2
  intel-cmplr-lic-rt==2026.1.2
  tbb==2023.2.0
  tcmlib==1.6.0
  umf==1.1.0
)
APT_PKGS=(hipcc libamdhip64-dev rocm-device-libs)
HIP_CLANG=/usr/bin/clang++-15
HIP_DEVICE_LIBS=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode

log() { printf '[gpu-toolchains %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
fail() { printf '[gpu-toolchains] ERROR: %s\n' "$*" >&2; exit 1; }
T_START=$SECONDS

mkdir -p "$DIR"
# One installer at a time per cache dir.
exec 9>"$DIR/.lock"
flock 9

# ---------------------------------------------------------------- apt (HIP)
if [[ -x $HIP_CLANG && -f $HIP_DEVICE_LIBS/ocml.bc && -f /usr/include/hip/hip_runtime.h ]]; then
  log "HIP: clang-15 + ROCm device libs already installed"
else
  SUDO=()
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || fail "apt-get needs root (or sudo) to install ${APT_PKGS[*]}"
    SUDO=(sudo)
  fi
  if [[ -r /etc/os-release ]] && ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
    log "warning: not Debian 12 (bookworm); ${APT_PKGS[*]} may be missing"
  fi
  log "HIP: apt-get install ${APT_PKGS[*]}"
  t=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq >&2
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${APT_PKGS[@]}" >&2
  log "HIP: apt done in $((SECONDS - t)) s"
  [[ -x $HIP_CLANG ]] || fail "$HIP_CLANG missing after apt-get install"
  [[ -f $HIP_DEVICE_LIBS/ocml.bc ]] || fail "$HIP_DEVICE_LIBS/ocml.bc missing after apt-get install"
fi

# --------------------------------------------------------- pip (PTX + SYCL)
PIP_PREFIX=$DIR/pip
PIP_STAMP=$PIP_PREFIX/.wave-installed
if [[ -f $PIP_STAMP && "$(cat "$PIP_STAMP")" == "${PIP_PKGS[*]}" ]]; then
  log "pip: ${#PIP_PKGS[@]} wheels already in $PIP_PREFIX"
else
  log "pip: installing ${PIP_PKGS[*]}"
  t=$SECONDS
  rm -rf "$PIP_PREFIX" "$PIP_PREFIX.tmp"
  # --prefix, not --target: pip --target silently drops the wheels' data
  # files under lib/ (libsycl.so, libintelocl.so, ...).
  python3 -m pip install -q --no-cache-dir --no-compile --ignore-installed \
    --no-warn-script-location --disable-pip-version-check \
    --root-user-action=ignore --prefix "$PIP_PREFIX.tmp" "${PIP_PKGS[@]}" >&2
  mv "$PIP_PREFIX.tmp" "$PIP_PREFIX"
  printf '%s' "${PIP_PKGS[*]}" >"$PIP_STAMP"
  log "pip: done in $((SECONDS - t)) s ($(du -sh "$PIP_PREFIX" | cut -f1))"
fi
SYCL_LIB=$PIP_PREFIX/lib
SYCL_INC=$PIP_PREFIX/include
PTXAS=$(find "$PIP_PREFIX" -path '*/nvidia/cuda_nvcc/bin/ptxas' -type f -print -quit)
[[ -n $PTXAS && -x $PTXAS ]] || fail "ptxas not found under $PIP_PREFIX"
[[ -f $SYCL_INC/sycl/sycl.hpp ]] || fail "sycl/sycl.hpp not found under $SYCL_INC"
[[ -f $SYCL_LIB/libsycl.so && -f $SYCL_LIB/libintelocl.so ]] \
  || fail "libsycl.so / libintelocl.so not found under $SYCL_LIB"

# ------------------------------------------------------------- SYCL runner
RUNNER_DIR=$DIR/sycl-runner
RUNNER=$RUNNER_DIR/wave-sycl-runner
mkdir -p "$RUNNER_DIR"
want_hash=$(cat "$RUNNER_SRC" "$PIP_STAMP" | sha256sum | cut -d' ' -f1)
if [[ -x $RUNNER && -f $RUNNER_DIR/.src-hash && "$(cat "$RUNNER_DIR/.src-hash")" == "$want_hash" ]]; then
  log "SYCL runner: up to date ($RUNNER)"
else
  log "SYCL runner: building $RUNNER"
  t=$SECONDS
  # The wheel's headers are meant for icpx -fsycl; with g++ they warn about
  # the missing -fsycl and about deprecated info descriptors: silence both.
  g++ -std=c++17 -O1 -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING -Wno-deprecated-declarations \
    -I"$SYCL_INC" "$RUNNER_SRC" -L"$SYCL_LIB" -lsycl -Wl,-rpath,"$SYCL_LIB" \
    -o "$RUNNER.tmp"
  mv "$RUNNER.tmp" "$RUNNER"
  printf '%s' "$want_hash" >"$RUNNER_DIR/.src-hash"
  log "SYCL runner: built in $((SECONDS - t)) s"
fi

# ------------------------------------------------------------ environment
export WAVE_PTXAS=$PTXAS
export WAVE_HIP_CLANG=$HIP_CLANG
export WAVE_HIP_DEVICE_LIBS=$HIP_DEVICE_LIBS
export WAVE_SYCL_RUNNER=$RUNNER
export OCL_ICD_FILENAMES=$SYCL_LIB/libintelocl.so
case ":${LD_LIBRARY_PATH:-}:" in
  *":$SYCL_LIB:"*) ;;
  *) export LD_LIBRARY_PATH=$SYCL_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
esac
# Persistent cache for the run-time SYCL compiler (3-5 s -> ~0.5 s per
# unchanged kernel source).
export SYCL_CACHE_PERSISTENT=1
export SYCL_CACHE_DIR=$DIR/sycl-cache

# ------------------------------------------------------------- self-tests
ST=$DIR/selftest
PTX_MAX=
if [[ $CHECK == 1 ]]; then
  rm -rf "$ST"
  mkdir -p "$ST"

  # --- PTX
  cat >"$ST/add_u32.ptx" <<'EOF'
.version 8.0
.target sm_75
.address_size 64

// c[i] = a[i] + b[i] for i < n
.visible .entry add_u32(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_c,
    .param .u32 p_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_c];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.u32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.u32 %r6, [%rd8];
    add.s64 %rd8, %rd5, %rd7;
    ld.global.u32 %r7, [%rd8];
    add.u32 %r6, %r6, %r7;
    add.s64 %rd8, %rd6, %rd7;
    st.global.u32 [%rd8], %r6;
DONE:
    ret;
}
EOF
  for arch in sm_75 sm_90; do
    "$PTXAS" -arch=$arch "$ST/add_u32.ptx" -o "$ST/add_u32.$arch.cubin" \
      || fail "ptxas -arch=$arch failed on $ST/add_u32.ptx"
  done
  # Highest .version this ptxas accepts (12.9 -> 8.8).
  for v in 8.0 8.1 8.2 8.3 8.4 8.5 8.6 8.7 8.8 8.9 9.0 9.1 9.2; do
    sed "s/^\.version 8\.0$/.version $v/" "$ST/add_u32.ptx" >"$ST/ver.ptx"
    if "$PTXAS" -arch=sm_75 "$ST/ver.ptx" -o /dev/null 2>/dev/null; then PTX_MAX=$v; fi
  done
  log "PTX: OK ($("$PTXAS" --version | grep -o 'release [0-9.]*'), sm_75 + sm_90, max .version $PTX_MAX)"

  # --- HIP
  cat >"$ST/wave_test.hip" <<'EOF'
#include <hip/hip_runtime.h>
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256)
wave_test(uint32_t* mem, const uint32_t* regs) {
  __shared__ uint32_t lds[256];
  const uint32_t tid = threadIdx.x;
  lds[tid] = regs[tid & 255] + blockIdx.x;
  __syncthreads();
  const uint32_t n = lds[(tid + 1) % blockDim.x];
  const int s = __shfl((int)n, (int)((tid + 1) % warpSize));
  const int x = __shfl_xor(s, 1);
  const unsigned long long b = __ballot(s & 1);
  const uint32_t lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  const uint32_t first = __builtin_amdgcn_readfirstlane((uint32_t)s);
  const int perm = __builtin_amdgcn_ds_bpermute((int)((lane ^ 1u) << 2), s);
  atomicAdd(&mem[0], 1u);
  atomicAdd(&mem[1], (uint32_t)__popcll(b));
  atomicMax(&mem[2], tid);
  __builtin_amdgcn_s_barrier();
  mem[4 + blockIdx.x * blockDim.x + tid] =
      (uint32_t)(s + x + perm) + first + lane + (uint32_t)warpSize;
}
EOF
  for arch in gfx90a gfx1030; do
    "$HIP_CLANG" -x hip -std=c++17 --rocm-path=/usr --hip-device-lib-path="$HIP_DEVICE_LIBS" \
      --cuda-device-only --no-gpu-bundle-output -O3 -c --offload-arch=$arch \
      "$ST/wave_test.hip" -o "$ST/wave_test.$arch.o" \
      || fail "clang++-15 --offload-arch=$arch failed on $ST/wave_test.hip"
    if command -v llvm-objdump-15 >/dev/null; then
      dis=$(llvm-objdump-15 -d "$ST/wave_test.$arch.o")
      for insn in s_barrier ds_bpermute_b32 v_readfirstlane_b32 v_mbcnt_hi_u32_b32 atomic_add; do
        grep -q "$insn" <<<"$dis" || fail "HIP $arch: '$insn' not in the disassembly"
      done
    fi
  done
  log "HIP: OK (clang-15, gfx90a + gfx1030: __shfl, __shfl_xor, __ballot, atomicAdd, __syncthreads, __builtin_amdgcn_*, warpSize)"

  # --- SYCL
  "$RUNNER" --info >"$ST/sycl-info.txt" || fail "SYCL: no CPU device (see above)"
  SG_SIZES=$(sed -n 's/^sub_group_sizes: //p' "$ST/sycl-info.txt")
  cat >"$ST/sycl_test.cpp" <<'EOF'
// Self-test for wave-sycl-runner: free-function kernel with a sub-group
// shuffle, a work-group barrier, work_group_static local memory, atomic_ref
// on device memory and the init_regs array.
#include <sycl/sycl.hpp>
#include <cstdint>
namespace syclexp = sycl::ext::oneapi::experimental;

#ifndef WAVE_SUB_GROUP_SIZE
#define WAVE_SUB_GROUP_SIZE 16
#endif

extern "C" SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::nd_range_kernel<3>))
SYCL_EXT_ONEAPI_FUNCTION_PROPERTY((syclexp::sub_group_size<WAVE_SUB_GROUP_SIZE>))
void wave_kernel(uint8_t* device_mem, const uint32_t* init_regs) {
  static syclexp::work_group_static<uint32_t[256]> lds;
  auto it = sycl::ext::oneapi::this_work_item::get_nd_item<3>();
  auto sg = it.get_sub_group();
  uint32_t* mem = reinterpret_cast<uint32_t*>(device_mem);
  const uint32_t ll = static_cast<uint32_t>(it.get_local_linear_id());
  const uint32_t nl = static_cast<uint32_t>(it.get_local_range().size());
  const uint32_t g = static_cast<uint32_t>(it.get_global_linear_id());
  uint32_t* l = lds;
  l[ll] = init_regs[ll & 255u] * 2u + mem[16 + g];
  sycl::group_barrier(it.get_group());
  const uint32_t r = l[(ll + 1u) % nl];
  const uint32_t s = sycl::select_from_group(sg, r, sg.get_local_linear_id() ^ 1u);
  using aref = sycl::atomic_ref<uint32_t, sycl::memory_order::relaxed,
                                sycl::memory_scope::device,
                                sycl::access::address_space::global_space>;
  aref(mem[0]).fetch_add(1u);
  aref(mem[1]).fetch_add(static_cast<uint32_t>(sg.get_local_linear_range()));
  aref(mem[2]).fetch_max(g);
  mem[16 + 128 + g] = s + 1000u * static_cast<uint32_t>(sg.get_group_linear_id());
}
EOF
  cat >"$ST/sycl_check.py" <<'EOF'
# usage: sycl_check.py OUT REGS SG LX LY  (global 64,2,1; input words 16.., output 144..)
import struct, sys
out, regs_path, sg, LX, LY = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
regs = struct.unpack('<256I', open(regs_path, 'rb').read())
m = struct.unpack('<272I', open(out, 'rb').read())
inp = [k * 3 for k in range(128)]
nl = LX * LY
exp = {0: 128, 1: 128 * min(sg, nl), 2: 127}
for gy in range(2):
    for gx in range(64):
        gx0, gy0 = gx - gx % LX, gy - gy % LY
        def lds(k):
            return (regs[k & 255] * 2 + inp[(gy0 + k // LX) * 64 + gx0 + k % LX]) & 0xffffffff
        ll = (gy % LY) * LX + gx % LX
        exp[144 + gy * 64 + gx] = (lds(((ll ^ 1) + 1) % nl) + 1000 * (ll // sg)) & 0xffffffff
bad = [(i, m[i], v) for i, v in sorted(exp.items()) if m[i] != v]
if bad:
    sys.exit("MISMATCH (word, got, want): %r" % bad[:8])
EOF
  python3 - "$ST" <<'EOF'
import struct, sys
d = sys.argv[1]
open(d + '/regs.bin', 'wb').write(struct.pack('<256I', *[(i * 7 + 3) & 0xffffffff for i in range(256)]))
open(d + '/mem_in.bin', 'wb').write(struct.pack('<144I', *([0] * 16 + [k * 3 for k in range(128)])))
EOF
  for cfg in "8 32 1" "16 16 2"; do
    read -r sg lx ly <<<"$cfg"
    "$RUNNER" --source "$ST/sycl_test.cpp" --kernel wave_kernel --global 64,2,1 --local $lx,$ly,1 \
      --sg "$sg" --mem-size 1088 --mem-in "$ST/mem_in.bin" --regs "$ST/regs.bin" \
      --out "$ST/sycl_out.sg$sg.bin" \
      || fail "SYCL runner failed (sub-group size $sg)"
    python3 "$ST/sycl_check.py" "$ST/sycl_out.sg$sg.bin" "$ST/regs.bin" "$sg" "$lx" "$ly" \
      || fail "SYCL result wrong (sub-group size $sg)"
  done
  log "SYCL: OK ($(sed -n 's/^device: //p' "$ST/sycl-info.txt"), sub-group sizes $SG_SIZES; sg 8 + 16 checked)"
fi

# ------------------------------------------------------------------ output
{
  echo "# generated by .ci/gpu-toolchains.sh; source this file"
  for v in WAVE_PTXAS WAVE_HIP_CLANG WAVE_HIP_DEVICE_LIBS WAVE_SYCL_RUNNER \
           OCL_ICD_FILENAMES SYCL_CACHE_PERSISTENT SYCL_CACHE_DIR; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done
  # Not strictly needed by the runner (it has an rpath), but lets other SYCL
  # programs and the OpenCL ICD find the wheel's libraries.
  printf 'export LD_LIBRARY_PATH=%q"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\n' "$SYCL_LIB"
  if [[ -n $PTX_MAX ]]; then printf 'export WAVE_PTX_MAX_VERSION=%q\n' "$PTX_MAX"; fi
} >"$DIR/env.sh.tmp"
# Keep WAVE_PTX_MAX_VERSION from an earlier checked run when --no-check.
if [[ -z $PTX_MAX && -f $DIR/env.sh ]]; then
  grep '^export WAVE_PTX_MAX_VERSION=' "$DIR/env.sh" >>"$DIR/env.sh.tmp" || true
fi
mv "$DIR/env.sh.tmp" "$DIR/env.sh"
log "all done in $((SECONDS - T_START)) s; environment in $DIR/env.sh"
cat "$DIR/env.sh"
