// PackedCopy: a copy of an object whose whole JSON tree lives in one allocation of exactly the
// size it needs.
//
// A tree built the usual way (parsed, patched, defaulted) is ~180 allocations for a pod, each
// rounded up to the allocator's size class. Objects that stay shared for as long as they are
// current (the version informers hold, seen by every in-process controller) are worth packing:
// a Running pod's tree (without managedFields) is one block of 7.7 KB (jemalloc's 8 KiB class)
// packed, against ~9.2 KB in ~180 allocations as the writer built it.
//
// The copy's storage is a resource over that block, reference-counted like any shared
// Boost.JSON resource: copies made from the packed object later (`json::value v =
// packed.doc().at("spec")`) use it too, as Boost.JSON copies take their source's storage. Such
// allocations no longer fit in the block and go to the heap, one by one; the resource (and its
// block) stays alive while any of them does. It is safe to copy from a packed object on many
// threads at once: after the copy that filled it, the resource's state is never written again.
//
// The cost: the copy is made twice (once to measure, into the thread's scratch memory) and every
// node holds a counted reference to the resource, ~2x a plain copy (bench/api/
// packed_object_bench.cc); a copy taken from a packed object is ~25 % slower than one from a
// plain tree.
#pragma once

#include <cstddef>

#include "api/object.h"

namespace converge::api {

// What packing took: the block's size, what the copy used of it, and the allocations it made
// that did not fit (none when the measure was right).
struct PackedStats {
  size_t capacity = 0;
  size_t used = 0;
  size_t overflowed = 0;
};

// Copies `doc` into one block sized to fit (two copies: one to measure, into scratch memory of
// the calling thread, and the one kept). `stats`, when given, receives what it took.
Object PackedCopy(const json::object& doc, PackedStats* stats = nullptr);

}  // namespace converge::api
