#pragma once
// Only stable-ABI headers: no <torch/extension.h>, no ATen, no c10.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

namespace muladd_pkg {

// Rejects what the kernels cannot do; shared by the CPU and CUDA kernels.
void check_args(const torch::stable::Tensor& a,
                const torch::stable::Tensor& b,
                const torch::stable::Tensor& c,
                const torch::stable::Tensor& out);

}  // namespace muladd_pkg
