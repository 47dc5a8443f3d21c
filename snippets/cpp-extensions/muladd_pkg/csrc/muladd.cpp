#include "muladd.h"

#include <cstdint>

namespace muladd_pkg {

using torch::stable::Tensor;
using torch::headeronly::ScalarType;

namespace {

// The bytes [first, last) that a tensor's elements can occupy.
bool overlaps(const Tensor& t, const Tensor& out) {
  if (t.numel() == 0 || out.numel() == 0) return false;
  auto span = [](const Tensor& x) {
    int64_t last = 0;
    for (int64_t d = 0; d < x.dim(); ++d) last += (x.size(d) - 1) * x.stride(d);
    const auto first = reinterpret_cast<std::uintptr_t>(x.const_data_ptr());
    return std::make_pair(first, first + (last + 1) * x.element_size());
  };
  const auto [t0, t1] = span(t);
  const auto [o0, o1] = span(out);
  // out == t is fine: each element is read before it is written
  const bool same = t0 == o0 && t.is_contiguous();
  return t0 < o1 && o0 < t1 && !same;
}

template <typename T>
void muladd_loop(const Tensor& a, const Tensor& b, const Tensor& c,
                 Tensor& out) {
  const T* pa = a.const_data_ptr<T>();
  const T* pb = b.const_data_ptr<T>();
  const T* pc = c.const_data_ptr<T>();
  T* po = out.mutable_data_ptr<T>();
  // numel() is a call into libtorch: once, not once per element
  const int64_t n = out.numel();
  // at::parallel_for through the stable ABI: chunks of the range on PyTorch's threads
  torch::stable::parallel_for(0, n, 32768, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) po[i] = pa[i] * pb[i] + pc[i];
  });
}

}  // namespace

void check_args(const Tensor& a, const Tensor& b, const Tensor& c,
                const Tensor& out) {
  for (const Tensor* t : {&b, &c, &out}) {
    STD_TORCH_CHECK(t->device() == a.device(),
                    "muladd: expected all tensors on one device");
    STD_TORCH_CHECK(t->scalar_type() == a.scalar_type(),
                    "muladd: expected one dtype");
    STD_TORCH_CHECK(t->sizes().equals(a.sizes()),
                    "muladd: shapes differ (no broadcasting)");
  }
  const ScalarType dtype = a.scalar_type();
  STD_TORCH_CHECK(dtype == ScalarType::Float || dtype == ScalarType::Double,
                  "muladd: supports float32 and float64");
  STD_TORCH_CHECK(out.is_contiguous(), "muladd: out must be contiguous");
  for (const Tensor* t : {&a, &b, &c}) {
    STD_TORCH_CHECK(!overlaps(*t, out), "muladd: out overlaps an input");
  }
}

void muladd_out_cpu(const Tensor& a, const Tensor& b, const Tensor& c,
                    Tensor& out) {
  check_args(a, b, c, out);
  STD_TORCH_CHECK(a.is_cpu(), "muladd (CPU kernel): expected CPU tensors");
  const Tensor ac = torch::stable::contiguous(a);
  const Tensor bc = torch::stable::contiguous(b);
  const Tensor cc = torch::stable::contiguous(c);
  if (a.scalar_type() == ScalarType::Float) {
    muladd_loop<float>(ac, bc, cc, out);
  } else {
    muladd_loop<double>(ac, bc, cc, out);
  }
}

Tensor muladd_cpu(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor out = torch::stable::new_empty(a, a.sizes());  // contiguous
  muladd_out_cpu(a, b, c, out);
  return out;
}

STABLE_TORCH_LIBRARY(muladd_pkg, m) {
  m.def("muladd(Tensor a, Tensor b, Tensor c) -> Tensor");
  m.def("muladd_out(Tensor a, Tensor b, Tensor c, Tensor(a!) out) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(muladd_pkg, CPU, m) {
  m.impl("muladd", TORCH_BOX(&muladd_cpu));
  m.impl("muladd_out", TORCH_BOX(&muladd_out_cpu));
}

}  // namespace muladd_pkg
