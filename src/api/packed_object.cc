#include "api/packed_object.h"

#include <cstdint>
#include <memory>
#include <new>

namespace converge::api {

namespace {

// Bytes from `at` to the next multiple of `align` (a power of two).
size_t PaddingFor(uintptr_t at, size_t align) {
  return static_cast<size_t>(-at) & (align - 1);
}

void* HeapAllocate(size_t bytes, size_t align) {
  if (align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) return ::operator new(bytes);
  return ::operator new(bytes, std::align_val_t(align));
}

// Unsized: clang before 19 declares the sized forms only with -fsized-deallocation.
void HeapDeallocate(void* p, size_t align) {
  if (align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete(p);
  } else {
    ::operator delete(p, std::align_val_t(align));
  }
}

// Counts what a copy asks for, padding included as a block at the heap's alignment would place
// it, and serves it from the thread's scratch memory, reused by the next measure.
class MeasuringResource final : public json::memory_resource {
 public:
  size_t needed() const { return offset_; }

 private:
  void* do_allocate(size_t bytes, size_t align) override {
    offset_ += PaddingFor(offset_, align) + bytes;
    return scratch_.allocate(bytes, align);
  }
  void do_deallocate(void*, size_t, size_t) override {}
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  // Enough for a pod's or a node's tree (~8 KB); per thread that packs (writers, the watch
  // cache), so kept small.
  static constexpr size_t kScratchBytes = 16 * 1024;
  static std::byte* Scratch() {
    thread_local std::unique_ptr<std::byte[]> buffer(new std::byte[kScratchBytes]);
    return buffer.get();
  }

  size_t offset_ = 0;
  // Beyond the thread's buffer, the heap, freed with the measure.
  json::monotonic_resource scratch_{Scratch(), kScratchBytes, json::storage_ptr()};
};

}  // namespace
}  // namespace converge::api

// A measuring copy is dropped without being freed node by node: its memory is the scratch.
template <>
struct boost::json::is_deallocate_trivial<converge::api::MeasuringResource> : std::true_type {};

namespace converge::api {
namespace {

// One block, filled front to back by the copy; afterwards (sealed) every allocation goes to the
// heap, so concurrent copies from the packed tree never touch the block's state.
class PackedResource final : public json::memory_resource {
 public:
  // `self` receives the resource's address (Boost.JSON's shared wrapper holds it as a member and
  // does not hand it out).
  PackedResource(size_t capacity, PackedResource** self);
  ~PackedResource() override;
  PackedResource(const PackedResource&) = delete;
  PackedResource& operator=(const PackedResource&) = delete;

  void Seal() { sealed_ = true; }
  PackedStats Stats() const {
    return {static_cast<size_t>(end_ - begin_), static_cast<size_t>(next_ - begin_), overflowed_};
  }

 private:
  void* do_allocate(size_t bytes, size_t align) override;
  void do_deallocate(void* p, size_t bytes, size_t align) override;
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::byte* begin_;
  std::byte* next_;
  std::byte* end_;
  bool sealed_ = false;
  size_t overflowed_ = 0;
};

PackedResource::PackedResource(size_t capacity, PackedResource** self)
    : begin_(static_cast<std::byte*>(HeapAllocate(capacity, alignof(std::max_align_t)))),
      next_(begin_),
      end_(begin_ + capacity) {
  *self = this;
}

PackedResource::~PackedResource() {
  HeapDeallocate(begin_, alignof(std::max_align_t));
}

void* PackedResource::do_allocate(size_t bytes, size_t align) {
  if (!sealed_) {
    const size_t pad = PaddingFor(reinterpret_cast<uintptr_t>(next_), align);
    if (pad + bytes <= static_cast<size_t>(end_ - next_)) {
      void* at = next_ + pad;
      next_ += pad + bytes;
      return at;
    }
    ++overflowed_;
  }
  return HeapAllocate(bytes, align);
}

void PackedResource::do_deallocate(void* p, size_t /*bytes*/, size_t align) {
  auto* at = static_cast<std::byte*>(p);
  if (at >= begin_ && at < end_) return;  // the block goes as a whole
  HeapDeallocate(p, align);
}

}  // namespace

Object PackedCopy(const json::object& doc, PackedStats* stats) {
  size_t needed = 0;
  {
    MeasuringResource measure;
    json::object probe(doc, json::storage_ptr(&measure));
    needed = measure.needed();
  }
  PackedResource* resource = nullptr;  // owned by the storage_ptrs of the tree
  json::storage_ptr sp = json::make_shared_resource<PackedResource>(needed, &resource);
  json::object packed(doc, sp);
  resource->Seal();
  if (stats != nullptr) *stats = resource->Stats();
  return Object(std::move(packed));
}

}  // namespace converge::api
