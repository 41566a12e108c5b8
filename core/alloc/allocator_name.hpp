#pragma once
// Which malloc really serves the running process, for start-up lines and
// reports. Found at run time, not taken from the build option: the dynamic
// linker is asked which object defines the `malloc` every call binds to, so
// an LD_PRELOADed jemalloc or tcmalloc shows, as does a mimalloc build whose
// mimalloc does not override malloc.
//
// Header-only on purpose: RINGHTTP_MIMALLOC is defined by the executable's
// own build target (the allocator is linked into executables, not into
// core), so this must be compiled as part of that target. That also means a
// function of this header lies in the executable itself, which is how a
// malloc defined there (a static link) is recognised.

#ifndef RINGHTTP_MIMALLOC
#define RINGHTTP_MIMALLOC 0
#endif

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <string_view>

#if RINGHTTP_MIMALLOC
#include <mimalloc.h>
#endif

namespace ringhttp::alloc {
namespace detail {

// "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" -> "jemalloc"; an object we
// do not know is named by its file: "other:libasan.so.8".
inline std::string name_of_object(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.starts_with("libmimalloc")) return "mimalloc";
  if (base.starts_with("libjemalloc")) return "jemalloc";
  if (base.starts_with("libtcmalloc")) return "tcmalloc";  // also tcmalloc_minimal and _debug
  if (base.starts_with("libc.so") || base.starts_with("libc-")) return "glibc";
  return "other:" + std::string(base);
}

// Only its address matters: it lies in the executable (see above).
inline void in_this_executable() {}

// Whether a block from plain calloc() comes from mimalloc's heap: the only
// way to tell when mimalloc is linked statically and so defines malloc in
// the executable, where the dynamic linker names no library.
inline bool mimalloc_serves_calloc() {
#if RINGHTTP_MIMALLOC
  void* probe = std::calloc(1, 64);
  const bool ours = mi_is_in_heap_region(probe);
  std::free(probe);
  return ours;
#else
  return false;
#endif
}

}  // namespace detail

inline std::string allocator_name() {
  void* const malloc_address = ::dlsym(RTLD_DEFAULT, "malloc");
  Dl_info defining{};
  if (malloc_address == nullptr || ::dladdr(malloc_address, &defining) == 0 || defining.dli_fname == nullptr) {
    return detail::mimalloc_serves_calloc() ? "mimalloc" : "unknown";
  }
  Dl_info self{};
  const bool in_executable = ::dladdr(reinterpret_cast<void*>(&detail::in_this_executable), &self) != 0 &&
                             self.dli_fbase == defining.dli_fbase;
  // For the executable itself glibc gives argv[0] as the name: a static
  // mimalloc is recognised by asking it; anything else is named by the file.
  if (in_executable && detail::mimalloc_serves_calloc()) return "mimalloc";
  return detail::name_of_object(defining.dli_fname);
}

}  // namespace ringhttp::alloc
