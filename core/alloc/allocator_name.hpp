#pragma once
// Which malloc the running binary really uses, for start-up lines and
// reports. Header-only on purpose: RINGHTTP_MIMALLOC is defined by the
// executable's own build target (the allocator is linked into executables,
// not into core), so this must be compiled as part of that target.

#ifndef RINGHTTP_MIMALLOC
#define RINGHTTP_MIMALLOC 0
#endif

#include <cstdlib>

#if RINGHTTP_MIMALLOC
#include <mimalloc.h>
#endif

namespace ringhttp::alloc {

inline const char* allocator_name() {
#if RINGHTTP_MIMALLOC
  // Asked of the allocator itself, so the line says what really runs: a
  // block from plain calloc() must come from mimalloc's heap.
  void* probe = std::calloc(1, 64);
  const bool ours = mi_is_in_heap_region(probe);
  std::free(probe);
  return ours ? "mimalloc" : "system (mimalloc linked but not overriding malloc)";
#else
  return "glibc";
#endif
}

}  // namespace ringhttp::alloc
