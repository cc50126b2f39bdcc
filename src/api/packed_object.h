// PackedCopy: a copy of an object whose whole JSON tree lives in one or two allocations of sizes
// the allocator serves without rounding up.
//
// A tree built the usual way (parsed, patched, defaulted) is ~180 allocations for a pod, each
// rounded up to the allocator's size class. Objects that stay shared for as long as they are
// current (the version informers hold, seen by every in-process controller) are worth packing:
// a Running pod's tree (without managedFields) is 7.7 KB packed, against ~9.2 KB in ~180
// allocations as the writer built it. Packed into one block it would take jemalloc's 8 KiB
// class; it takes a head block of the largest class that does not exceed it (7 KiB) and a tail
// block for the rest (~600 bytes, the 640 class): 7,808 bytes.
//
// The copy's storage is a resource over those blocks, reference-counted like any shared
// Boost.JSON resource: copies made from the packed object later (`json::value v =
// packed.doc().at("spec")`) use it too, as Boost.JSON copies take their source's storage. Such
// allocations no longer fit in the blocks and go to the heap, one by one; the resource (and its
// blocks) stays alive while any of them does. It is safe to copy from a packed object on many
// threads at once: after the copy that filled it, the resource's state is never written again.
//
// The cost: the copy is made twice (once to measure, into the thread's scratch memory, recording
// each request for the layout) and every node holds a counted reference to the resource, ~2x a
// plain copy (bench/api/packed_object_bench.cc; the layout's planning and record add ~11 % of
// instructions, docs/PERFORMANCE.md); a copy taken from a packed object is ~25 % slower than one
// from a plain tree.
#pragma once

#include <cstddef>

#include "api/object.h"

namespace converge::api {

// What packing took: what one block would have had to hold (`measured`), the blocks and their
// total size, what the copy used of them (of the tail all of it, of the head all but what no
// later request fitted, when the measure was right), and the allocations that did not fit (none
// when the measure was right).
struct PackedStats {
  size_t measured = 0;
  size_t blocks = 0;
  size_t capacity = 0;
  size_t tail = 0;  // the tail block's size (0: one block)
  size_t used = 0;
  size_t tail_used = 0;
  size_t overflowed = 0;
  // The blocks' sizes rounded up to the allocator's size classes (AllocatorSizeClass).
  size_t allocated = 0;
};

// The size class jemalloc (the server's allocator) serves a request of `bytes` from: four sizes
// per doubling above 64 bytes (5, 6, 7, 8 KiB between 4 and 8 KiB; 10, 12, 14, 16 KiB above),
// steps of 16 bytes below. Allocators that round less lose nothing by the layout chosen from it.
size_t AllocatorSizeClass(size_t bytes);

// Copies `doc` into blocks sized to fit (two copies: one to measure, into scratch memory of the
// calling thread, and the one kept). `stats`, when given, receives what it took.
Object PackedCopy(const json::object& doc, PackedStats* stats = nullptr);

}  // namespace converge::api
