#include "muladd.h"

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/c/shim.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace muladd_pkg {

using torch::stable::Tensor;
using torch::headeronly::ScalarType;

template <typename T>
__global__ void muladd_kernel(const T* a, const T* b, const T* c, T* out,
                              int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}

template <typename T>
void launch(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& out,
            cudaStream_t stream) {
  constexpr int threads = 256;
  const int64_t n = out.numel();
  const int64_t blocks = (n + threads - 1) / threads;
  STD_TORCH_CHECK(blocks <= INT32_MAX, "muladd: too many elements for a grid");
  muladd_kernel<T><<<blocks, threads, 0, stream>>>(
      a.const_data_ptr<T>(), b.const_data_ptr<T>(), c.const_data_ptr<T>(),
      out.mutable_data_ptr<T>(), n);
  const cudaError_t err = cudaGetLastError();
  STD_TORCH_CHECK(err == cudaSuccess, "muladd: launch failed: ",
                  cudaGetErrorString(err));
}

void muladd_out_cuda(const Tensor& a, const Tensor& b, const Tensor& c,
                     Tensor& out) {
  check_args(a, b, c, out);
  STD_TORCH_CHECK(a.is_cuda(), "muladd (CUDA kernel): expected CUDA tensors");
  if (out.numel() == 0) return;  // a launch of zero blocks is an error
  const torch::stable::accelerator::DeviceGuard guard(a.get_device_index());
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(
      aoti_torch_get_current_cuda_stream(a.get_device_index(), &stream));
  const Tensor ac = torch::stable::contiguous(a);
  const Tensor bc = torch::stable::contiguous(b);
  const Tensor cc = torch::stable::contiguous(c);
  if (a.scalar_type() == ScalarType::Float) {
    launch<float>(ac, bc, cc, out, static_cast<cudaStream_t>(stream));
  } else {
    launch<double>(ac, bc, cc, out, static_cast<cudaStream_t>(stream));
  }
}

Tensor muladd_cuda(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor out = torch::stable::new_empty(a, a.sizes());
  muladd_out_cuda(a, b, c, out);
  return out;
}

STABLE_TORCH_LIBRARY_IMPL(muladd_pkg, CUDA, m) {
  m.impl("muladd", TORCH_BOX(&muladd_cuda));
  m.impl("muladd_out", TORCH_BOX(&muladd_out_cuda));
}

}  // namespace muladd_pkg
